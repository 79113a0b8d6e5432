// La ficha de una aprobación en su tarjeta: transcripción, historial del cliente (90 días),
// líneas del pedido con su estado en el libro, plazo, firmas y «lo atiendo yo».
// Todo texto de datos va con textContent (el()).
import { duracion, el, euros, fecha } from "./comun.js";

const ROLES = { encargado: "encargado", gerente: "gerente", regional: "regional" };
const TIPOS = { approve: "aprobó", edit: "editó", reject: "rechazó", respond: "respondió" };

/** «Caduca en 3 h 10 min» (o «Plazo vencido»), del campo caduca. */
export function textoPlazo(caduca, fueraDeRango = false) {
  if (fueraDeRango) return "Plazo fuera de rango: avisa a quien administra la tienda (la auditoría lo enseña)";
  const quedan = (new Date(caduca).getTime() - Date.now()) / 1000;
  if (Number.isNaN(quedan)) return "";
  return quedan <= 0 ? "Plazo vencido: ya no se puede decidir" : `Caduca en ${duracion(quedan)}`;
}

/** Lo que pide la matriz de autoridad y las firmas ya dadas (si la API los trae). */
export function bloqueFirmas(aprobacion) {
  const requisito = aprobacion.requisito;
  const firmas = Array.isArray(aprobacion.firmas) ? aprobacion.firmas : [];
  if (!requisito && !firmas.length) return el("div", { class: "firmas" });
  const partes = [];
  if (requisito?.texto) partes.push(el("span", { class: "requisito" }, requisito.texto));
  else if (requisito?.rol_minimo) partes.push(el("span", { class: "requisito" }, `necesita ${ROLES[requisito.rol_minimo] || requisito.rol_minimo}`));
  const necesarias = requisito?.firmas_necesarias;
  if (necesarias > 1) partes.push(el("span", { class: "cuenta-firmas" }, ` · ${necesarias} firmas: ${firmas.length} de ${necesarias}`));
  const lista = firmas.length
    ? el("ul", { class: "quien-firmo" }, firmas.map((f) => el("li", {},
      `${f.nombre || f.encargado}${f.rol ? ` (${ROLES[f.rol] || f.rol})` : ""} ${TIPOS[f.decision] || f.decision || "firmó"}`,
      f.fecha ? ` · ${fecha(f.fecha)}` : "")))
    : null;
  return el("div", { class: "firmas" }, el("p", { class: "linea-firmas" }, partes), lista);
}

function transcripcion(mensajes) {
  return el("details", { class: "transcripcion", open: true },
    el("summary", {}, `Conversación (${mensajes.length} mensajes)`),
    el("ol", { class: "mensajes-ficha" }, mensajes.map((m) => el("li", { class: `linea-chat ${m.rol}${m.retenido ? " retenido" : ""}` },
      el("span", { class: "quien" }, m.rol === "cliente" ? "Cliente"
        : m.rol === "tienda" ? `${m.autor || "La tienda"} (tienda)` : "Agente"),
      el("span", { class: "cuando" }, ` · ${fecha(m.fecha)}`),
      m.retenido ? el("span", { class: "marca-retenido" }, " · mientras esperaba") : null,
      el("p", { class: "texto-cliente" }, m.texto)))));
}

function tablaLineas(pedido) {
  return el("div", { class: "tabla-desplazable", tabindex: 0, role: "region", "aria-label": `Líneas del pedido ${pedido.id}` },
    el("table", { class: "tabla lineas" },
      el("caption", {}, `Pedido ${pedido.id} · ${pedido.estado} · ${euros(pedido.importe)} · ${fecha(pedido.fecha)}`),
      el("thead", {}, el("tr", {}, ["Producto", "Uds.", "Pagado", "Ya devuelto", "Queda", "Estado"]
        .map((t) => el("th", { scope: "col" }, t)))),
      el("tbody", {}, pedido.lineas.map((l) => el("tr", {},
        el("td", {}, l.producto, el("span", { class: "sku" }, ` ${l.sku}`)),
        el("td", {}, String(l.unidades)),
        el("td", {}, euros(l.pagado)),
        el("td", {}, l.unidades_cambiadas ? `${euros(l.reembolsado)} + ${l.unidades_cambiadas} cambiada(s)` : euros(l.reembolsado)),
        el("td", {}, euros(l.reembolsable)),
        el("td", {}, el("span", { class: `estado-linea ${l.estado.replace(/\s+/g, "-")}` }, l.estado)))))));
}

/** Una fila con la plantilla de su operación: «{pedido} · {importe:euros}» (de la API). */
export function rellenar(plantilla, fila) {
  return plantilla.replace(/\{(\w+)(:euros)?\}/g, (_, campo, enEuros) =>
    (enEuros ? euros(fila[campo]) : String(fila[campo] ?? "")));
}

function historialCliente(h) {
  // Las operaciones con efecto (reembolsos, cambios...) y cómo se enseñan llegan en h.tipos.
  const tipos = Array.isArray(h.tipos) ? h.tipos : [];
  const filas = [
    ...h.pedidos.map((p) => [p.fecha, `Pedido ${p.id}`, `${p.estado} · ${euros(p.importe)}`]),
    ...tipos.flatMap((t) => (h[t.clave] || []).map((f) => [f.fecha, `${t.etiqueta} ${f.numero}`, rellenar(t.detalle, f)])),
    ...h.devoluciones.map((d) => [d.fecha, "Devolución", `${d.pedido} · ${euros(d.importe)}${d.motivo ? ` · ${d.motivo}` : ""}`]),
  ].sort((a, b) => String(b[0]).localeCompare(String(a[0])));
  const cuentas = tipos.map((t) => `${(h[t.clave] || []).length} ${t.plural}, `).join("");
  const resumen = `Historial del cliente (${h.dias} días): ${h.pedidos.length} pedidos, ` +
    `${cuentas}${h.devoluciones.length} devoluciones`;
  return el("details", { class: "historial-cliente" }, el("summary", {}, resumen),
    el("ul", {}, filas.map(([cuando, que, detalle]) => el("li", {}, el("strong", {}, que), ` · ${detalle} · ${fecha(cuando)}`))));
}

/** Lo que la operación de cada acción añade a sus argumentos (nombres, precios, direcciones). */
function detallesAcciones(ficha) {
  const acciones = Array.isArray(ficha.acciones) ? ficha.acciones : [];
  return (ficha.detalles || []).map((detalles, i) => (detalles.length
    ? el("section", { class: "detalles-accion", "aria-label": `Detalle: ${acciones[i]?.titulo || "propuesta"}` },
      el("h3", {}, acciones[i]?.titulo || "Propuesta"),
      el("dl", { class: "detalles" }, detalles.flatMap((d) => [
        el("dt", {}, d.etiqueta),
        el("dd", {}, d.valor == null ? "—" : d.dinero ? euros(d.valor) : d.valor)])))
    : null)).filter(Boolean);
}

/** La ficha completa (de GET /api/aprobaciones/{id}). */
export function bloqueFicha(ficha) {
  const partes = [...detallesAcciones(ficha)];
  if (Array.isArray(ficha.conversacion)) partes.push(transcripcion(ficha.conversacion));
  for (const pedido of Object.values(ficha.pedidos || {})) partes.push(tablaLineas(pedido));
  if (ficha.historial_cliente) partes.push(historialCliente(ficha.historial_cliente));
  return el("div", { class: "ficha" }, partes);
}

/** «Lo atiende X hasta las HH:MM» o nada. */
export function textoReclamo(reclamada, yo) {
  if (!reclamada) return "";
  const hasta = new Date(reclamada.hasta).toLocaleTimeString("es-ES", { hour: "2-digit", minute: "2-digit" });
  // Por su nombre: el personal no lee ids («enc-talavera-2»).
  const quien = reclamada.nombre || "otra persona de la tienda";
  return reclamada.encargado === yo ? `La atiendes tú (hasta las ${hasta})` : `La atiende ${quien} (hasta las ${hasta})`;
}
