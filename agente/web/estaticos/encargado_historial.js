// La pestaña «Historial»: decisiones de tus tiendas con filtros, por páginas, y su CSV.
import { api, el, ErrorApi, euros, fecha } from "./comun.js";

const $ = (id) => document.getElementById(id);
const POR_PAGINA = 25;
const DECISIONES = { approve: "Aprobada", edit: "Editada", reject: "Rechazada", respond: "Respondida", caducada: "Caducada" };

function parametros(pagina) {
  const datos = new FormData($("filtros-historial"));
  const q = new URLSearchParams();
  for (const [clave, valor] of datos) {
    const texto = String(valor).trim();
    if (!texto) continue;
    if (clave === "desde") q.set("desde", `${texto}T00:00:00`);
    else if (clave === "hasta") {
      const dia = new Date(`${texto}T00:00:00`);
      dia.setDate(dia.getDate() + 1); // «hasta» incluye el día elegido
      q.set("hasta", dia.toISOString());
    } else q.set(clave, texto);
  }
  if (q.has("desde")) q.set("desde", new Date(q.get("desde")).toISOString()); // hora local -> ISO
  if (pagina) { q.set("pagina", String(pagina)); q.set("por_pagina", String(POR_PAGINA)); }
  return q;
}

function importe(accion) {
  if (accion.importe_final && accion.importe_final !== accion.importe_propuesto) {
    return `${euros(accion.importe_final)} (pedido ${euros(accion.importe_propuesto)})`;
  }
  return euros(accion.importe_final || accion.importe_propuesto);
}

const VERBOS = { approve: "aprobó", edit: "editó", reject: "rechazó", respond: "respondió" };
const ROLES = { encargado: "encargado", gerente: "gerente", regional: "regional" };
const CANALES = { cli: "por la CLI", protocolo: "por el protocolo" };

/** Cada persona que firmó y lo que decidió en la operación n (una aprobación de dos firmas, dos). */
function firmas(d, n) {
  const lista = Array.isArray(d.firmas) ? d.firmas : [];
  if (!lista.length) return d.encargado.nombre;
  return el("ul", { class: "firmas-historial" }, lista.map((f) => {
    const decidio = (f.acciones || [])[n] || { tipo: f.decision };
    let texto = `${f.nombre} (${ROLES[f.rol] || f.rol}) ${VERBOS[decidio.tipo] || decidio.tipo || "firmó"}`;
    if (decidio.importe) texto += ` a ${euros(decidio.importe)}`;
    if (decidio.motivo) texto += `: ${decidio.motivo}`;
    // Por dónde firmó, si no fue esta bandeja (la CLI de «agente entrar» o el protocolo de LangGraph).
    const canal = CANALES[f.canal] ? ` · ${CANALES[f.canal]}` : "";
    return el("li", {}, texto, el("span", { class: "cuando" }, ` · ${fecha(f.fecha)}${canal}`));
  }));
}

function fila(d) {
  const acciones = d.acciones.length ? d.acciones : [{}];
  return acciones.map((a, n) => el("tr", {},
    el("td", {}, fecha(d.decidida)),
    el("td", {}, d.tienda_nombre || d.tienda),
    el("td", {}, `${d.cliente.nombre} (${d.cliente.id})`),
    el("td", {}, [a.titulo || a.nombre, a.pedido].filter(Boolean).join(" · ")), // «Reembolso», no «reembolsar»
    d.estado === "fallida"
      ? el("td", { class: "fallida" }, "Fallida", el("span", { class: "motivo" }, ` · ${DECISIONES[d.tipo] || d.tipo}, pero no se pudo hacer: ${d.fallo}`))
      : el("td", {}, DECISIONES[d.tipo] || d.tipo, a.motivo ? el("span", { class: "motivo" }, ` · ${a.motivo}`) : null),
    el("td", {}, importe(a)),
    el("td", {}, firmas(d, n)),
    el("td", {}, d.nota || "")));
}

export function iniciarHistorial({ token, alCaducar }) {
  let pagina = 1;
  async function buscar(nueva = 1) {
    pagina = nueva;
    $("estado-historial").textContent = "Buscando…";
    try {
      const r = await api(`/api/decisiones?${parametros(pagina)}`, { token: token() });
      $("tabla-historial").tBodies[0].replaceChildren(...r.decisiones.flatMap(fila));
      const paginas = Math.max(1, Math.ceil(r.total / r.por_pagina));
      $("estado-historial").textContent = r.total ? `${r.total} decisiones` : "Ninguna decisión cumple los filtros.";
      $("pagina").textContent = `Página ${r.pagina} de ${paginas}`;
      $("anterior").disabled = r.pagina <= 1;
      $("siguiente").disabled = r.pagina >= paginas;
      document.body.dataset.historial = "1";
    } catch (e) {
      if (e instanceof ErrorApi && e.estado === 401) return alCaducar("Tu sesión ha caducado.");
      $("estado-historial").textContent = e.detalle || "No se ha podido cargar el historial.";
    }
  }

  async function exportar() {
    $("estado-historial").textContent = "Preparando el CSV…";
    try {
      const r = await fetch(`/api/decisiones.csv?${parametros(0)}`, { headers: { Authorization: `Bearer ${token()}` } });
      if (!r.ok) throw new ErrorApi(r.status, (await r.json().catch(() => ({}))).detalle || `Error ${r.status}`);
      const enlace = el("a", { href: URL.createObjectURL(await r.blob()), download: "decisiones.csv", hidden: true });
      document.body.append(enlace);
      enlace.click();
      enlace.remove();
      $("estado-historial").textContent = "CSV descargado.";
    } catch (e) {
      $("estado-historial").textContent = e.detalle || "No se ha podido exportar.";
    }
  }

  $("filtros-historial").addEventListener("submit", (e) => { e.preventDefault(); buscar(1); });
  $("csv").addEventListener("click", exportar);
  $("anterior").addEventListener("click", () => buscar(pagina - 1));
  $("siguiente").addEventListener("click", () => buscar(pagina + 1));
  return {
    buscar: () => buscar(pagina),
    // El filtro por tienda, solo a quien firma en más de una (una regional).
    tiendas(lista) {
      $("h-tienda").replaceChildren($("h-tienda").options[0], ...lista.map((t) => el("option", { value: t.id }, t.nombre)));
      $("campo-h-tienda").hidden = lista.length < 2;
    },
  };
}
