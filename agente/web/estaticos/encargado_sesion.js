// La sesión del encargado: cómo entrar (proveedores OpenID Connect, enlace por correo) y la
// renovación del token de vida corta mientras la pestaña está abierta.
import { CLAVES, api, datosToken, el, ErrorApi } from "./comun.js";

const $ = (id) => document.getElementById(id);

/** Sin sesión: un botón por proveedor y, si la tienda tiene correo, el formulario del enlace. */
export function mostrarEntradas() {
  api("/api/entrada/proveedores").then(({ proveedores, correo }) => {
    $("entradas").replaceChildren(...proveedores.map((p) =>
      el("a", { class: "boton-entrada", href: p.url }, `Entrar con ${p.titulo}`)));
    $("entradas").hidden = proveedores.length === 0;
    $("form-correo").hidden = !correo;
  }).catch(() => {});
  $("form-correo").addEventListener("submit", async (e) => {
    e.preventDefault();
    const aviso = $("aviso-correo");
    aviso.hidden = false;
    try {
      const r = await api("/api/entrada/correo", { metodo: "POST", cuerpo: { email: $("correo").value.trim() } });
      aviso.textContent = r.detalle;
    } catch (error) {
      aviso.textContent = error.detalle || "No se ha podido pedir el enlace.";
    }
  });
}

/**
 * Renueva el token de una sesión de OIDC o de enlace (los llevan «ent») a media vida,
 * mientras la pestaña está abierta. Un 401/403 (de baja, sesión al máximo) la cierra.
 */
export function programarRenovacion(estado, { alFallar }) {
  const datos = datosToken(estado.token);
  if (!datos || !datos.ent) return;
  const restante = datos.exp * 1000 - Date.now();
  setTimeout(async function renovar() {
    try {
      const { token } = await api("/api/sesion/renovar", { metodo: "POST", token: estado.token });
      estado.token = token;
      sessionStorage.setItem(CLAVES.encargado, token);
      programarRenovacion(estado, { alFallar });
    } catch (e) {
      if (e instanceof ErrorApi && [401, 403].includes(e.estado)) alFallar(e.detalle);
      else setTimeout(renovar, 15_000);
    }
  }, Math.max(1000, restante / 2));
}
