/** Whether a URL's host is this machine, where plain HTTP is allowed (OAuth 2.1 §1.5, RFC 8252 §8.3). */
export function isLoopbackHost(hostname: string): boolean {
  return (
    hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname)
  );
}
