// Proveedor OpenID Connect real para las pruebas: oidc-provider (certificado por la
// OpenID Foundation) con sus páginas de login y consentimiento de desarrollo.
//   node proveedor.mjs  (PUERTO, CLIENTES y CUENTAS en el entorno, JSON)
// CUENTAS: {"login": {"email": "...", "email_verified": true, "name": "..."}}. El login de
// la página acepta cualquier contraseña; un login que no está en CUENTAS no entra.
// Escribe «listo <emisor>» en la salida estándar cuando escucha.
import Provider from "oidc-provider";

const puerto = Number(process.env.PUERTO || 0);
const emisor = process.env.EMISOR || `http://127.0.0.1:${puerto}`; // PUERTO fijo: el emisor lo lleva
const clientes = JSON.parse(process.env.CLIENTES || "[]");
const cuentas = JSON.parse(process.env.CUENTAS || "{}");

const proveedor = new Provider(emisor, {
  clients: clientes.map((c) => ({
    grant_types: ["authorization_code"],
    response_types: ["code"],
    token_endpoint_auth_method: "client_secret_basic",
    ...c,
  })),
  async findAccount(_ctx, id) {
    const cuenta = cuentas[id];
    if (!cuenta) return undefined;
    return { accountId: id, async claims() { return { sub: id, ...cuenta }; } };
  },
  claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
  // Los claims pedidos van también en el ID token (como hacen Google o Keycloak).
  conformIdTokenClaims: false,
  pkce: { required: () => true },
  features: {
    devInteractions: { enabled: true },
    rpInitiatedLogout: { enabled: true },
  },
  cookies: { keys: ["pruebas-agente-tienda-oidc"] },
  ttl: { Session: 3600, Interaction: 600, Grant: 3600, AuthorizationCode: 60, IdToken: 600, AccessToken: 600 },
});
proveedor.proxy = false;

const servidor = proveedor.listen(puerto, "127.0.0.1", () => {
  const real = servidor.address().port;
  console.log(`listo ${emisor} ${real}`);
});
process.on("SIGTERM", () => servidor.close(() => process.exit(0)));
