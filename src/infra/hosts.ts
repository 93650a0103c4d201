import ipaddr from 'ipaddr.js';

/**
 * True for `localhost` and loopback addresses, the binds where a rebound DNS name is the only way in from a browser.
 * Its own module: the composition root needs it, and taking it from the MCP router loaded the whole capability
 * registry (about 2.5 s of CPU) into every CLI command before the command ran.
 */
export function isLoopbackHost(host: string): boolean {
  if (host === 'localhost') return true;
  return ipaddr.isValid(host) && ipaddr.process(host).range() === 'loopback';
}
