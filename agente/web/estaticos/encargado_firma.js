// Quién firma y si su firma cuenta: la cabecera con el rol y las tiendas por su nombre
// (/api/sesion) y, en cada tarjeta, lo que dice la API en «mi_firma» (la misma comprobación
// que la decisión): «Firmada por ti · falta 1 firma (gerente o regional)», o por qué tu firma
// no contaría, ANTES de pulsar, con «Aprobar» deshabilitado y diciéndolo.
import { el } from "./comun.js";

const ROLES = { encargado: "Encargado", gerente: "Gerente", regional: "Regional" };

/** «A», «A y B», «A, B y C». */
export function enumerar(nombres) {
  return nombres.length < 2 ? nombres.join("") : `${nombres.slice(0, -1).join(", ")} y ${nombres.at(-1)}`;
}

/** «Beatriz Romero · Regional · Madrid-Centro y Talavera de la Reina». */
export function textoSesion(perfil) {
  const tiendas = (perfil.rol === "regional" ? perfil.tiendas : [perfil.tienda]).filter(Boolean);
  const rol = perfil.administrador ? "Administrador" : ROLES[perfil.rol] || perfil.rol;
  return [perfil.nombre, rol, enumerar(tiendas.map((t) => t.nombre))].filter(Boolean).join(" · ");
}

const mayuscula = (texto) => (texto ? texto[0].toUpperCase() + texto.slice(1) : "");

/** Lo que dice la tarjeta junto a los botones («» si tu firma cuenta). */
export function textoMiFirma(mia, editable = false) {
  if (!mia) return "";
  if (mia.ya_firmada) return `Firmada por ti · falta ${mia.falta || "otra firma"}: la tiene que dar otra persona.`;
  if (mia.puede) return "";
  const falta = mia.falta ? `: falta ${mia.falta}` : "";
  // «Bajar el importe» solo si la tarjeta tiene «Editar» (una cancelación no lo tiene).
  const otra = editable ? "Puedes rechazarla o bajar el importe." : "Puedes rechazarla.";
  return `Tu firma no cuenta para aprobar${falta}. ${mayuscula(mia.motivo || "")}. ${otra}`;
}

/** El aviso y los botones de la tarjeta según «mi_firma»; ``botones``: el texto de cada tipo. */
export function pintarMiFirma(tarjeta, botones) {
  const mia = tarjeta._aprobacion.mi_firma;
  const aviso = tarjeta.querySelector(".aviso-firma");
  const editable = (tarjeta._aprobacion.acciones || []).some((a) => (a.decisiones_permitidas || []).includes("edit"));
  aviso.textContent = textoMiFirma(mia, editable);
  tarjeta.classList.toggle("firmada-por-mi", Boolean(mia?.ya_firmada));
  for (const boton of tarjeta.querySelectorAll(".botones button[data-tipo]")) {
    const tipo = boton.dataset.tipo;
    const bloqueado = Boolean(mia && (mia.ya_firmada || (!mia.puede && tipo === "approve")));
    boton.disabled = bloqueado;
    boton.textContent = !bloqueado || tipo !== "approve" ? botones[tipo] || tipo
      : mia.ya_firmada ? "Aprobar · ya firmaste" : "Aprobar · tu firma no cuenta";
    if (bloqueado && boton.getAttribute("aria-pressed") === "true") boton._soltar?.();
  }
}

/** La firma propia, para el recuento tras la última firma («2 de 2»). */
export function firmaPropia(perfil, tipo) {
  return { encargado: perfil?.id, nombre: perfil?.nombre, rol: perfil?.rol, decision: tipo, fecha: new Date().toISOString() };
}

/** El bloque del aviso (vacío hasta que llega «mi_firma»). */
export function bloqueAvisoFirma() {
  return el("p", { class: "aviso-firma", role: "status" });
}
