// The OpenID Connect provider of tests/browser/test_oidc_browser.py: oauth2-mock-server on
// 127.0.0.1:<port>, whose /authorize signs every visitor in at once; its ID tokens carry <email>.
// Usage: node provider.mjs <port> <email>   (run beside the node_modules that npm ci installed)
import { OAuth2Server } from 'oauth2-mock-server';

const [port, email] = process.argv.slice(2);
const server = new OAuth2Server();
await server.issuer.keys.generate('RS256');
server.service.on('beforeTokenSigning', (token) => {
  token.payload.sub = 'user-0001';
  token.payload.email = email;
  token.payload.email_verified = true;
});
server.issuer.url = `http://127.0.0.1:${port}`;   // not localhost, which may resolve to ::1 first
await server.start(Number(port), '127.0.0.1');
console.log(`issuer ${server.issuer.url}`);
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, async () => { await server.stop(); process.exit(0); });
}
