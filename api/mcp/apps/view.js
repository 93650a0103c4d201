/**
 * The View side of MCP Apps (ext-apps spec 2026-01-26) that the three apps share: the JSON-RPC handshake with the host
 * over postMessage (`ui/initialize` → `ui/notifications/initialized`), the tool result it draws from
 * (`ui/notifications/tool-result`), the host's theme, and size reports. Written by hand instead of inlining the
 * package's App class (540 KB with its dependencies) so each resource stays a few kilobytes; the e2e test drives it
 * with the package's own AppBridge, which validates every message. Everything is drawn with DOM APIs and textContent:
 * no innerHTML, no network, no external script, style or font (a sandboxed iframe under the spec's default CSP).
 */
(function () {
  'use strict';
  const PROTOCOL_VERSION = '2026-01-26';
  const SVG_NS = 'http://www.w3.org/2000/svg';
  const pending = new Map();
  let nextId = 1;
  let draw = null;

  function post(message) {
    window.parent.postMessage(message, '*');
  }

  function request(method, params) {
    const id = nextId++;
    post({ jsonrpc: '2.0', id, method, params });
    return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
  }

  function notify(method, params) {
    post({ jsonrpc: '2.0', method, params });
  }

  /** Host styles (spec: CSS variables and theme in hostContext) override the defaults of view.css. */
  function applyHostContext(context) {
    if (!context) return;
    if (context.theme) document.documentElement.dataset.theme = context.theme;
    const variables = context.styles && context.styles.variables;
    if (variables) for (const [name, value] of Object.entries(variables)) if (value) document.documentElement.style.setProperty(name, value);
  }

  /** Creates an HTML (or, with `svg`, SVG) element with attributes and children (strings become text nodes). */
  function el(tag, attributes, children, svg) {
    const node = svg ? document.createElementNS(SVG_NS, tag) : document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) if (value !== undefined && value !== null) node.setAttribute(name, String(value));
    for (const child of [].concat(children || [])) if (child !== undefined && child !== null && child !== false) node.append(typeof child === 'object' ? child : String(child));
    return node;
  }

  function svg(tag, attributes, children) {
    return el(tag, attributes, children, true);
  }

  /** Money as the API gives it ({amount: decimal string, currency}), in the reader's locale. */
  function money(value) {
    if (!value) return '–';
    const amount = Number(value.amount);
    try {
      return new Intl.NumberFormat(undefined, { style: 'currency', currency: value.currency, maximumFractionDigits: 0 }).format(amount);
    } catch {
      return `${value.amount} ${value.currency}`;
    }
  }

  function show(root, node) {
    root.replaceChildren(node);
    root.dataset.rendered = 'true';
  }

  function render(result) {
    const root = document.getElementById('app');
    if (result.isError || !result.structuredContent) {
      const text = (result.content || []).filter((block) => block.type === 'text').map((block) => block.text).join('\n');
      let message = text;
      try {
        const parsed = JSON.parse(text);
        message = `${parsed.error.code}: ${parsed.error.message}`;
      } catch {
        // Not the D3 error object: show the text as it is.
      }
      show(root, el('p', { class: 'error', role: 'alert' }, message || 'The tool returned no result.'));
      return;
    }
    show(root, draw(result.structuredContent));
  }

  window.addEventListener('message', (event) => {
    if (event.source !== window.parent) return;
    const message = event.data;
    if (!message || message.jsonrpc !== '2.0') return;
    if (message.method === undefined && pending.has(message.id)) {
      const { resolve, reject } = pending.get(message.id);
      pending.delete(message.id);
      if (message.error) reject(new Error(message.error.message));
      else resolve(message.result);
      return;
    }
    if (message.method === 'ui/notifications/tool-result') render(message.params);
    else if (message.method === 'ui/notifications/host-context-changed') applyHostContext(message.params);
    else if (message.id !== undefined && (message.method === 'ping' || message.method === 'ui/resource-teardown')) post({ jsonrpc: '2.0', id: message.id, result: {} });
    else if (message.id !== undefined) post({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: `Method not found: ${message.method}` } });
  });

  /** Starts the app: `drawResult(structuredContent)` returns the element that shows the tool result. */
  function start(name, drawResult) {
    draw = drawResult;
    request('ui/initialize', { appInfo: { name, version: '1.0.0' }, appCapabilities: {}, protocolVersion: PROTOCOL_VERSION })
      .then((result) => {
        applyHostContext(result.hostContext);
        notify('ui/notifications/initialized', {});
        // The host sizes the frame to the content (spec: ui/notifications/size-changed).
        new ResizeObserver(() => notify('ui/notifications/size-changed', { width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight }))
          .observe(document.documentElement);
      })
      .catch((error) => show(document.getElementById('app'), el('p', { class: 'error', role: 'alert' }, `The host refused the app: ${error.message}`)));
  }

  window.storeOpsView = { start, el, svg, money };
})();
