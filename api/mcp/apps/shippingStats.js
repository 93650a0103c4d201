/**
 * App of shipping_stats: per carrier the outcomes of its shipments (stacked bar) and its delivery times from hand-over
 * to the first delivery scan (a bar to the median, a whisker to the 90th percentile, on one hour scale for all carriers).
 */
(function () {
  'use strict';
  const { start, el, svg } = window.storeOpsView;
  const OUTCOMES = [['delivered', 'Delivered', 'var(--good)'], ['returned', 'Returned', 'var(--warn)'], ['failed', 'Failed', 'var(--bad)'], ['inTransit', 'In transit', 'var(--muted)']];

  function hoursText(hours) {
    if (hours === null) return 'not measured';
    return hours >= 48 ? `${(hours / 24).toFixed(1)} d` : `${Math.round(hours * 10) / 10} h`;
  }

  function draw(content) {
    const data = content.data;
    const carriers = data.carriers;
    const mostShipments = Math.max(1, ...carriers.map((c) => c.shipments));
    const longest = Math.max(1, ...carriers.map((c) => c.delivery.p90Hours || 0));
    const labelWidth = 210, outcomeWidth = 200, gap = 24, timeWidth = 220, row = 34;
    const width = labelWidth + outcomeWidth + gap + timeWidth + 80;
    const rows = carriers.map((carrier, i) => {
      let x = labelWidth;
      const segments = OUTCOMES.filter(([field]) => carrier[field] > 0).map(([field, label, colour]) => {
        const length = (carrier[field] / mostShipments) * outcomeWidth;
        const segment = svg('rect', { x, y: 8, width: Math.max(1, length), height: 14, fill: colour, 'data-outcome': field, 'data-count': carrier[field] }, svg('title', {}, `${label}: ${carrier[field]}`));
        x += length;
        return segment;
      });
      const timeX = labelWidth + outcomeWidth + gap;
      const scale = (hours) => timeX + (hours / longest) * timeWidth;
      const { medianHours, p90Hours, measured } = carrier.delivery;
      const times = medianHours === null ? [svg('text', { x: timeX, y: 19, class: 'muted' }, 'no delivery measured')] : [
        svg('line', { x1: scale(medianHours), x2: scale(p90Hours), y1: 15, y2: 15, stroke: 'var(--info)', 'stroke-width': 2, 'data-p90-hours': p90Hours }),
        svg('line', { x1: scale(p90Hours), x2: scale(p90Hours), y1: 9, y2: 21, stroke: 'var(--info)', 'stroke-width': 2 }),
        svg('rect', { x: timeX, y: 8, width: Math.max(1, scale(medianHours) - timeX), height: 14, fill: 'var(--info)', opacity: 0.75, 'data-median-hours': medianHours }),
        svg('text', { x: scale(p90Hours) + 6, y: 19 }, `${hoursText(medianHours)} / ${hoursText(p90Hours)}`),
      ];
      const rate = carrier.deliveryRate === null ? '' : ` · ${Math.round(carrier.deliveryRate * 1000) / 10} % delivered`;
      return svg('g', { 'data-carrier': carrier.carrierCode, transform: `translate(0 ${i * row})` }, [
        svg('text', { x: 0, y: 14 }, carrier.carrierName || carrier.carrierCode),
        svg('text', { x: 0, y: 28, class: 'muted' }, `${carrier.shipments} shipments${rate}`),
        ...segments,
        ...times,
        svg('title', {}, `${measured} measured`),
      ]);
    });
    const chart = svg('svg', { viewBox: `0 0 ${width} ${Math.max(1, carriers.length) * row + 18}`, width, role: 'img', 'aria-label': 'Outcomes and delivery times per carrier' }, [
      svg('text', { x: labelWidth, y: carriers.length * row + 14, class: 'muted' }, 'Outcomes (shipments)'),
      svg('text', { x: labelWidth + outcomeWidth + gap, y: carriers.length * row + 14, class: 'muted' }, `Delivery time: median / 90 % (0 – ${hoursText(longest)})`),
      ...rows,
    ]);
    const shipments = data.shipments;
    const period = content.period ? `${content.period.from} – ${content.period.to} (${content.period.timeZone})` : '';
    return el('section', {}, [
      el('h1', {}, `Shipping · ${content.market}`),
      el('p', { class: 'sub' }, `${period} · from hand-over to the first delivery scan`),
      el('div', { class: 'tiles' }, [
        el('div', { class: 'tile', 'data-tile': 'total' }, [el('b', {}, String(shipments.total)), el('span', {}, 'Shipments')]),
        el('div', { class: 'tile', 'data-tile': 'deliveryRate' }, [el('b', {}, data.deliveryRate === null ? '–' : `${Math.round(data.deliveryRate * 1000) / 10} %`), el('span', {}, 'Delivery rate')]),
        el('div', { class: 'tile', 'data-tile': 'median' }, [el('b', {}, hoursText(data.delivery.medianHours)), el('span', {}, 'Median delivery')]),
        el('div', { class: 'tile', 'data-tile': 'p90' }, [el('b', {}, hoursText(data.delivery.p90Hours)), el('span', {}, '90 % delivered within')]),
      ]),
      el('div', { class: 'legend' }, OUTCOMES.map(([, label, colour]) => el('span', {}, [el('i', { style: `background:${colour}` }), label]))),
      carriers.length === 0 ? el('p', { class: 'note' }, 'No shipments in this period.') : chart,
    ]);
  }

  start('shipping-stats', draw);
})();
