/* global document, window */
// Pages showing work in progress (a large customer export) reload themselves every few seconds while it runs.
// A file, not an inline script: the pages' Content-Security-Policy allows only scripts of this origin.
const running = document.querySelector('[data-refresh]');
if (running) setTimeout(() => window.location.reload(), Number(running.getAttribute('data-refresh')) * 1000);
