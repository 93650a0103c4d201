/**
 * App of reports_financial_summary: the shop's period in EUR as bars (revenue, VAT, discounts, cost of goods, profit,
 * costs, result) and tiles (orders, average order, gross margin). Fields the credential may not see are absent from
 * the result, so they are simply not drawn.
 */
(function () {
  'use strict';
  const { start, el, svg, money } = window.storeOpsView;
  const FIGURES = [
    ['revenueWithVat', 'Revenue with VAT'], ['revenueWithoutVat', 'Revenue without VAT'], ['vat', 'VAT'], ['discounts', 'Discounts'],
    ['cogs', 'Cost of goods'], ['grossProfit', 'Gross profit'], ['shipping', 'Shipping charged'], ['companyCosts', 'Company costs'],
    ['resultAfterCosts', 'Result after costs'],
  ];

  function draw(content) {
    const data = content.data;
    const figures = FIGURES.filter(([field]) => data[field]).map(([field, label]) => ({ field, label, value: data[field], amount: Number(data[field].amount) }));
    const largest = Math.max(1, ...figures.map((f) => Math.abs(f.amount)));
    const labelWidth = 150, barWidth = 300, valueWidth = 110, row = 26;
    const chart = svg('svg', { viewBox: `0 0 ${labelWidth + barWidth + valueWidth} ${figures.length * row + 4}`, width: labelWidth + barWidth + valueWidth, role: 'img', 'aria-label': 'Period figures in EUR' },
      figures.map((f, i) => {
        const length = Math.max(1, Math.round((Math.abs(f.amount) / largest) * barWidth));
        const negative = f.amount < 0;
        return svg('g', { 'data-figure': f.field, transform: `translate(0 ${i * row})` }, [
          svg('text', { x: 0, y: 17 }, f.label),
          svg('rect', { x: labelWidth, y: 5, width: length, height: 16, rx: 3, fill: negative ? 'var(--bad)' : f.field === 'resultAfterCosts' || f.field === 'grossProfit' ? 'var(--good)' : 'var(--info)' }),
          svg('text', { x: labelWidth + length + 6, y: 17, 'data-amount': f.value.amount }, money(f.value)),
        ]);
      }));
    const tiles = [
      ['orders', 'Orders', String(data.orders)],
      ['cancelledOrders', 'Cancelled', String(data.cancelledOrders)],
      ['averageOrderValue', 'Average order', money(data.averageOrderValue)],
      ['grossMargin', 'Gross margin', typeof data.grossMargin === 'number' ? `${data.grossMargin} %` : undefined],
      ['cogsCoverage', 'Purchase prices known', typeof data.cogsCoverage === 'number' ? `${Math.round(data.cogsCoverage * 100)} % of lines` : undefined],
    ].filter(([, , shown]) => shown !== undefined);
    const period = content.period ? `${content.period.from} – ${content.period.to} (${content.period.timeZone})` : '';
    return el('section', {}, [
      el('h1', {}, `Sales summary · ${content.market}`),
      el('p', { class: 'sub', 'data-period': '' }, `${period} · EUR at each order's stored rate`),
      el('div', { class: 'tiles' }, tiles.map(([field, label, shown]) => el('div', { class: 'tile', 'data-tile': field }, [el('b', {}, shown), el('span', {}, label)]))),
      chart,
      data.cogs === null ? el('p', { class: 'note' }, 'Too few purchase prices are known for cost of goods and profit.') : null,
    ]);
  }

  start('sales-summary', draw);
})();
