// La pestaña «Movimientos»: todo el dinero y la mercancía que se movieron en tus tiendas,
// automáticos o firmados (/api/movimientos), con filtros, totales por tipo, por páginas y su
// CSV (el mismo formato que el del historial). Un movimiento fallido o pendiente no enseña
// importe final: no se pagó. Los textos de datos se pintan con textContent (el()).
import { api, el, ErrorApi, euros, fecha } from "./comun.js";

const POR_PAGINA = 25;
const TIPOS = { reembolso: "Reembolso", diferencia_devuelta: "Diferencia de cambio devuelta",
  cobro: "Cobro de diferencia de cambio", cobro_devuelto: "Cobro devuelto (cambio anulado)",
  cancelacion: "Cancelación", cambio: "Cambio de artículo", reenvio: "Reenvío", vale: "Vale" };
const ESTADOS = { completado: "Completado", pendiente: "Pendiente", fallido: "Fallido", anulado: "Anulado" };
const SENTIDOS = { sale: "al cliente", entra: "del cliente", vale: "vale al cliente", mercancia: "mercancía" };

const opciones = (mapa) => [el("option", { value: "" }, "Todos"),
  ...Object.entries(mapa).map(([v, t]) => el("option", { value: v }, t))];

function formulario() {
  return el("form", { id: "filtros-movimientos", class: "filtros", "aria-label": "Filtrar los movimientos" },
    el("p", { class: "campo" }, el("label", { for: "m-desde" }, "Desde"),
      el("input", { id: "m-desde", name: "desde", type: "date" })),
    el("p", { class: "campo" }, el("label", { for: "m-hasta" }, "Hasta (incluido)"),
      el("input", { id: "m-hasta", name: "hasta", type: "date" })),
    el("p", { class: "campo" }, el("label", { for: "m-tipo" }, "Tipo"),
      el("select", { id: "m-tipo", name: "tipo" }, opciones(TIPOS))),
    el("p", { class: "campo" }, el("label", { for: "m-estado" }, "Estado"),
      el("select", { id: "m-estado", name: "estado" }, opciones(ESTADOS))),
    el("p", { class: "campo", id: "campo-m-tienda", hidden: true }, el("label", { for: "m-tienda" }, "Tienda"),
      el("select", { id: "m-tienda", name: "tienda" }, el("option", { value: "" }, "Todas"))),
    el("p", { class: "botones-filtro" }, el("button", { type: "submit" }, "Buscar"),
      el("button", { type: "button", id: "csv-movimientos", class: "secundario" }, "Exportar CSV")));
}

// Las fechas del formulario son días de la hora local; «hasta» incluye el día elegido.
function parametros(form, pagina) {
  const q = new URLSearchParams();
  for (const [clave, valor] of new FormData(form)) {
    const texto = String(valor).trim();
    if (!texto) continue;
    if (clave === "desde") q.set("desde", new Date(`${texto}T00:00:00`).toISOString());
    else if (clave === "hasta") {
      const dia = new Date(`${texto}T00:00:00`);
      dia.setDate(dia.getDate() + 1);
      q.set("hasta", dia.toISOString());
    } else q.set(clave, texto);
  }
  if (pagina) { q.set("pagina", String(pagina)); q.set("por_pagina", String(POR_PAGINA)); }
  return q;
}

function pasarela(m) {
  const p = m.pasarela;
  if (!p) return "—";
  let texto = `${p.referencia} · ${p.estado || ""}`;
  if (p.fallo_tardio_en) texto += " · fallo tardío del proveedor";
  else if (p.requiere_persona) texto += " · marcado para una persona";
  else if (m.estado === "fallido") texto += ` · falló ${p.intentos === 1 ? "1 vez" : `${p.intentos} veces`}`;
  return el("span", {}, texto, p.error && m.estado !== "completado" ? el("span", { class: "motivo" }, `: ${p.error}`) : null);
}

function fila(m) {
  return el("tr", { "data-numero": m.numero, "data-estado": m.estado },
    el("td", {}, fecha(m.fecha)),
    el("td", {}, m.tienda_nombre || m.tienda),
    el("td", {}, m.titulo, el("span", { class: "motivo" }, ` · ${m.numero}${m.operacion !== m.numero ? ` (${m.operacion})` : ""}`)),
    el("td", {}, `${m.cliente.nombre} · ${m.pedido}`),
    el("td", {}, m.importe ? `${euros(m.importe)} ${SENTIDOS[m.flujo]}` : SENTIDOS[m.flujo]),
    el("td", { class: "importe-final" }, m.importe_final ? euros(m.importe_final) : "—"),
    el("td", { class: m.estado === "fallido" ? "fallida" : "" }, ESTADOS[m.estado] || m.estado),
    // El veredicto, si dice algo más que «automático» (por qué pedía firma).
    el("td", {}, m.autorizado_por, m.veredicto.startsWith("automático") ? null
      : el("span", { class: "motivo" }, ` · ${m.veredicto}`)),
    el("td", {}, pasarela(m)),
    el("td", {}, m.detalle || ""));
}

function totales(lista) {
  if (!lista.length) return [];
  return [el("table", { class: "tabla totales-movimientos" },
    el("caption", {}, "Totales por tipo (con los filtros, todas las páginas)"),
    el("thead", {}, el("tr", {}, ...["Tipo", "Movimientos", "Importe", "Importe final", "Pendientes", "Fallidos", "Anulados"]
      .map((t) => el("th", { scope: "col" }, t)))),
    el("tbody", {}, lista.map((t) => el("tr", { "data-tipo": t.tipo },
      el("td", {}, t.titulo), el("td", {}, String(t.movimientos)), el("td", {}, t.importe ? euros(t.importe) : "—"),
      el("td", {}, t.importe_final ? euros(t.importe_final) : "—"), el("td", {}, String(t.pendientes)),
      el("td", {}, String(t.fallidos)), el("td", {}, String(t.anulados))))))];
}

/** Monta la pestaña en su panel; devuelve lo que hay que hacer al abrirla (buscar) y el filtro de tiendas. */
export function iniciarMovimientos({ token, alCaducar }) {
  const panel = document.getElementById("movimientos");
  const form = formulario();
  const estado = el("p", { id: "estado-movimientos", class: "actualizado", role: "status", "aria-live": "polite" });
  const resumen = el("div", { id: "totales-movimientos", class: "tabla-desplazable", tabindex: "0", role: "region",
    "aria-label": "Totales por tipo" });
  const cuerpo = el("tbody", {});
  const anterior = el("button", { type: "button", class: "secundario", disabled: true }, "Anterior");
  const siguiente = el("button", { type: "button", class: "secundario", disabled: true }, "Siguiente");
  const pagina = el("span", {});
  let actual = 1;

  async function buscar(n = 1) {
    estado.textContent = "Buscando…";
    try {
      const r = await api(`/api/movimientos?${parametros(form, n)}`, { token: token() });
      actual = n;
      cuerpo.replaceChildren(...r.movimientos.map(fila));
      resumen.replaceChildren(...totales(r.totales));
      const paginas = Math.max(1, Math.ceil(r.total / r.por_pagina));
      estado.textContent = r.total === 0 ? "Ningún movimiento cumple los filtros."
        : r.total === 1 ? "1 movimiento" : `${r.total} movimientos`;
      pagina.textContent = `Página ${r.pagina} de ${paginas}`;
      anterior.disabled = r.pagina <= 1;
      siguiente.disabled = r.pagina >= paginas;
      document.body.dataset.movimientos = "1";
    } catch (e) {
      if (e instanceof ErrorApi && e.estado === 401) return alCaducar("Tu sesión ha caducado.");
      estado.textContent = e.detalle || "No se han podido cargar los movimientos.";
    }
  }

  async function exportar() {
    estado.textContent = "Preparando el CSV…";
    try {
      const r = await fetch(`/api/movimientos.csv?${parametros(form, 0)}`, { headers: { Authorization: `Bearer ${token()}` } });
      if (!r.ok) throw new ErrorApi(r.status, (await r.json().catch(() => ({}))).detalle || `Error ${r.status}`);
      const enlace = el("a", { href: URL.createObjectURL(await r.blob()), download: "movimientos.csv", hidden: true });
      document.body.append(enlace);
      enlace.click();
      enlace.remove();
      estado.textContent = "CSV descargado.";
    } catch (e) {
      estado.textContent = e.detalle || "No se ha podido exportar.";
    }
  }

  form.addEventListener("submit", (e) => { e.preventDefault(); buscar(1); });
  form.querySelector("#csv-movimientos").addEventListener("click", exportar);
  anterior.addEventListener("click", () => buscar(actual - 1));
  siguiente.addEventListener("click", () => buscar(actual + 1));
  const columnas = ["Fecha", "Tienda", "Movimiento", "Cliente y pedido", "Importe", "Importe final", "Estado",
    "Autorizado por", "Pasarela", "Detalle"];
  panel.replaceChildren(
    el("h2", {}, "Movimientos de dinero y mercancía"), form, estado, resumen,
    el("div", { class: "tabla-desplazable", tabindex: "0", role: "region", "aria-labelledby": "titulo-tabla-movimientos" },
      el("table", { id: "tabla-movimientos", class: "tabla" },
        el("caption", { id: "titulo-tabla-movimientos" }, "Movimientos, el más reciente primero"),
        el("thead", {}, el("tr", {}, ...columnas.map((t) => el("th", { scope: "col" }, t)))), cuerpo)),
    el("nav", { class: "paginacion", "aria-label": "Páginas de movimientos" }, anterior, pagina, siguiente));
  return {
    buscar: () => buscar(actual),
    tiendas(lista) {
      const select = form.querySelector("#m-tienda");
      select.replaceChildren(select.options[0], ...lista.map((t) => el("option", { value: t.id }, t.nombre)));
      form.querySelector("#campo-m-tienda").hidden = lista.length < 2;
    },
  };
}
