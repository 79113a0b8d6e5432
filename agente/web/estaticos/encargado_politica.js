// «Cambios de política por firmar»: las solicitudes que amplían la política de tus tiendas
// (/api/solicitudes-politica), con la diferencia de cada valor y firmar o rechazar. Solo
// las ven gerentes y regionales (a un encargado la API le responde 403 y no se enseña).
import { api, el, ErrorApi, fecha } from "./comun.js";

const $ = (id) => document.getElementById(id);

function tarjetaSolicitud(s, { token, yo, alCambiar }) {
  const resultado = el("p", { class: "resultado", role: "status", "aria-live": "polite" });
  const motivo = el("textarea", { id: `motivo-politica-${s.id}`, rows: 2, maxlength: 500 });
  const propia = s.autor === yo;
  const decidir = async (decision) => {
    try {
      await api(`/api/solicitudes-politica/${s.id}/decision`, { metodo: "POST", token: token(),
        cuerpo: { decision, ...(motivo.value.trim() ? { motivo: motivo.value.trim() } : {}) } });
      resultado.textContent = decision === "aprobar" ? "Firmada: el cambio ya se aplica." : "Rechazada.";
      // La tarjeta se va al recargar: la confirmación queda fuera de ella, visible.
      const confirmacion = $("confirmacion-politica");
      confirmacion.textContent = decision === "aprobar"
        ? `Firmada la solicitud ${s.id} de ${s.tienda_nombre}: el cambio ya se aplica.`
        : `Rechazada la solicitud ${s.id} de ${s.tienda_nombre}: la política no cambia.`;
      confirmacion.hidden = false;
      alCambiar();
    } catch (e) {
      resultado.textContent = (e instanceof ErrorApi && e.detalle) || "No se ha podido.";
    }
  };
  return el("article", { class: "tarjeta solicitud-politica", id: `politica-${s.id}`, "aria-labelledby": `titulo-politica-${s.id}` },
    el("h3", { id: `titulo-politica-${s.id}` }, `Cambio de política de ${s.tienda_nombre} (solicitud ${s.id})`),
    el("p", {}, `Lo propone ${s.autor_nombre} (${s.autor_rol}) · ${fecha(s.creada)} · caduca ${fecha(s.caduca)}`),
    el("p", { class: "subtitulo" }, "Qué cambia (antes → después):"),
    el("ul", {}, s.diferencias.map((d) => el("li", {}, d.texto, d.sentido === "amplia" ? " (amplía)" : " (endurece)"))),
    s.motivo ? el("p", {}, "Motivo: ", el("q", {}, s.motivo)) : null,
    el("p", { class: "requisito" }, propia
      ? `Es tuya: la firma ${s.firman}.`
      : `La firma ${s.firman}; nunca quien la propone.`),
    propia ? null : el("div", { class: "decision" },
      el("p", { class: "campo" }, el("label", { for: `motivo-politica-${s.id}` }, "Motivo (obligatorio para rechazar)"), motivo),
      el("div", { class: "botones" },
        el("button", { type: "button", onclick: () => decidir("aprobar") }, "Firmar y aplicar"),
        el("button", { type: "button", class: "secundario", onclick: () => decidir("rechazar") }, "Rechazar"))),
    resultado);
}

/** Carga y pinta las solicitudes pendientes; devuelve la función que las recarga.
 * ``alContar(n)``: cuántas esperan tu firma (las tuyas no), para la insignia «Pendientes». */
export function iniciarSolicitudesPolitica({ token, yo, alContar = () => {} }) {
  const cargar = async () => {
    try {
      const lista = await api("/api/solicitudes-politica", { token: token() });
      $("solicitudes-politica").hidden = lista.length === 0;
      $("lista-solicitudes-politica").replaceChildren(
        ...lista.map((s) => tarjetaSolicitud(s, { token, yo, alCambiar: () => setTimeout(cargar, 1500) })));
      alContar(lista.filter((s) => s.autor !== yo).length);
      if (location.hash.startsWith("#politica-")) document.getElementById(location.hash.slice(1))?.scrollIntoView();
    } catch (e) {
      $("solicitudes-politica").hidden = true; // un encargado no administra la política
      alContar(0);
    }
  };
  cargar();
  setInterval(cargar, 60_000);
  return cargar;
}
