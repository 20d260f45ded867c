/** Whether a URL's host is this machine, where plain HTTP is allowed (OAuth 2.1 §1.5, RFC 8252 §8.3). */
export function isLoopbackHost(hostname: string): boolean {
  return (
    hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname)
  );
}

/**
 * Whether a client address (as the per-address limits key it: `127.0.0.1`, `::1`, `::ffff:127.0.0.1`) is this
 * machine: a developer running clients against a local gateway.
 */
export function isLoopbackAddress(address: string): boolean {
  const v4 = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
  return address === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}
