// La pestaña «Conversaciones»: todas las de tus tiendas (no solo las pendientes), buscables
// por cliente, pedido y estado, por páginas (/api/personal/conversaciones); cada una abre su
// transcripción con «Escribir al cliente»: un mensaje firmado con tu nombre que el cliente ve
// en directo en su chat. Escribir no toca el agente ni una aprobación pendiente.
// Los textos de datos se pintan con textContent (el()).
import { api, el, ErrorApi, fecha } from "./comun.js";

const POR_PAGINA = 20;
const MAX_TEXTO = 2000;
const ESTADOS = { resuelta: "Resuelta", esperando_tienda: "Esperando a la tienda", abierta: "Abierta" };
const QUIEN = { cliente: "Cliente", agente: "Agente" };

function formulario() {
  const opciones = [el("option", { value: "" }, "Todos"),
    ...Object.entries(ESTADOS).map(([v, t]) => el("option", { value: v }, t))];
  return el("form", { id: "filtros-conversaciones", class: "filtros", "aria-label": "Buscar conversaciones" },
    el("p", { class: "campo" }, el("label", { for: "c-cliente" }, "Cliente (nombre o id)"),
      el("input", { id: "c-cliente", name: "cliente", type: "search", autocomplete: "off", maxlength: 100 })),
    el("p", { class: "campo" }, el("label", { for: "c-pedido" }, "Pedido"),
      el("input", { id: "c-pedido", name: "pedido", type: "search", autocomplete: "off", maxlength: 40 })),
    el("p", { class: "campo" }, el("label", { for: "c-estado" }, "Estado"),
      el("select", { id: "c-estado", name: "estado" }, opciones)),
    el("p", { class: "botones-filtro" }, el("button", { type: "submit" }, "Buscar")));
}

function lineaMensaje(m) {
  const quien = m.rol === "tienda" ? `${m.autor} (tienda)` : QUIEN[m.rol] || m.rol;
  return el("li", { class: `linea-chat ${m.rol}${m.retenido ? " retenido" : ""}` },
    el("span", { class: "quien" }, quien),
    el("span", { class: "cuando" }, ` · ${fecha(m.fecha)}`),
    m.retenido ? el("span", { class: "marca-retenido" }, " · mientras esperaba") : null,
    el("p", { class: "texto-cliente" }, m.texto));
}

/** Monta la pestaña en su panel; devuelve lo que hay que hacer al abrirla (buscar). */
export function iniciarConversaciones({ token, alCaducar }) {
  const panel = document.getElementById("conversaciones");
  const estado = el("p", { id: "estado-conversaciones", class: "actualizado", role: "status", "aria-live": "polite" });
  const lista = el("ul", { id: "lista-conversaciones", class: "lista-conversaciones" });
  const anterior = el("button", { type: "button", class: "secundario", disabled: true }, "Anterior");
  const siguiente = el("button", { type: "button", class: "secundario", disabled: true }, "Siguiente");
  const pagina = el("span", {});
  const vista = el("section", { id: "vista-conversacion", class: "vista-conversacion", hidden: true,
    "aria-labelledby": "titulo-vista-conversacion" });
  const form = formulario();
  let actual = 1;
  let abierta = null;

  const fallo = (e, donde) => {
    if (e instanceof ErrorApi && e.estado === 401) return alCaducar("Tu sesión ha caducado.");
    donde.textContent = e.detalle || "No se ha podido.";
  };

  async function buscar(n = 1) {
    const q = new URLSearchParams({ pagina: String(n), por_pagina: String(POR_PAGINA) });
    for (const [clave, valor] of new FormData(form)) if (String(valor).trim()) q.set(clave, String(valor).trim());
    estado.textContent = "Buscando…";
    try {
      const r = await api(`/api/personal/conversaciones?${q}`, { token: token() });
      actual = n;
      lista.replaceChildren(...r.conversaciones.map((c) => el("li", { class: "conversacion-tienda" },
        el("button", { type: "button", class: "abrir-conversacion", "data-thread": c.thread_id,
          "aria-current": c.thread_id === abierta ? "true" : null, onclick: () => abrir(c.thread_id) },
        el("span", { class: `estado-conv ${c.estado_cliente}` }, ESTADOS[c.estado_cliente] || c.estado_cliente),
        el("span", { class: "cliente-conv" }, `${c.cliente_nombre} (${c.cliente_id})`),
        el("span", { class: "detalle-conv" }, [fecha(c.actividad), c.tienda_nombre,
          c.pedidos.join(", "), c.tema].filter(Boolean).join(" · "))))));
      const paginas = Math.max(1, Math.ceil(r.total / POR_PAGINA));
      estado.textContent = r.total === 0 ? "Ninguna conversación cumple la búsqueda."
        : r.total === 1 ? "1 conversación" : `${r.total} conversaciones`;
      pagina.textContent = `Página ${n} de ${paginas}`;
      anterior.disabled = n <= 1;
      siguiente.disabled = n >= paginas;
    } catch (e) { fallo(e, estado); }
  }

  async function abrir(hilo) {
    abierta = hilo;
    for (const b of lista.querySelectorAll("button")) b.setAttribute("aria-current", String(b.dataset.thread === hilo));
    vista.hidden = false;
    vista.replaceChildren(el("p", {}, "Cargando la conversación…"));
    try {
      const c = await api(`/api/personal/conversaciones/${encodeURIComponent(hilo)}`, { token: token() });
      pintar(c);
    } catch (e) { fallo(e, vista); }
  }

  function pintar(c) {
    const resultado = el("p", { class: "resultado", role: "status", "aria-live": "polite" });
    const texto = el("textarea", { id: "texto-tienda", rows: 3, maxlength: MAX_TEXTO, required: true });
    const escribir = el("form", { class: "form-escribir", hidden: true },
      el("label", { for: "texto-tienda" }, `Mensaje para ${c.cliente_nombre} (lo verá firmado con tu nombre)`),
      texto,
      el("p", { class: "pista" }, "Texto llano; no cambia ninguna decisión pendiente ni lo lee el agente."),
      el("div", { class: "acciones-form" }, el("button", { type: "submit" }, "Enviar al cliente")));
    const boton = el("button", { type: "button", class: "escribir-cliente", "aria-expanded": "false",
      onclick: () => {
        escribir.hidden = false;
        boton.setAttribute("aria-expanded", "true");
        texto.focus();
      } }, "Escribir al cliente");
    escribir.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      if (!texto.value.trim()) { resultado.textContent = "Escribe el mensaje."; return; }
      resultado.textContent = "Enviando…";
      try {
        await api(`/api/personal/conversaciones/${encodeURIComponent(c.thread_id)}/mensajes`,
          { metodo: "POST", token: token(), cuerpo: { texto: texto.value.trim() } });
        await abrir(c.thread_id);
        vista.querySelector(".resultado").textContent = "Enviado: el cliente lo ve en su chat.";
      } catch (e) { fallo(e, resultado); }
    });
    vista.replaceChildren(
      el("h3", { id: "titulo-vista-conversacion" }, `${c.cliente_nombre} (${c.cliente_id}) · ${c.tienda_nombre}`),
      el("p", { class: "estado-vista" }, `${ESTADOS[c.estado_cliente] || c.estado_cliente}`,
        c.pendiente ? " · con una aprobación pendiente en «Pendientes»" : "",
        c.pedidos.length ? ` · ${c.pedidos.join(", ")}` : ""),
      el("ol", { class: "mensajes-ficha", "aria-label": "Transcripción" }, c.mensajes.map(lineaMensaje)),
      boton, escribir, resultado);
  }

  form.addEventListener("submit", (e) => { e.preventDefault(); buscar(1); });
  anterior.addEventListener("click", () => buscar(actual - 1));
  siguiente.addEventListener("click", () => buscar(actual + 1));
  panel.replaceChildren(
    el("h2", {}, "Conversaciones de tus tiendas"), form, estado,
    el("div", { class: "conversaciones-y-vista" }, el("div", {}, lista,
      el("nav", { class: "paginacion", "aria-label": "Páginas de conversaciones" }, anterior, pagina, siguiente)), vista));
  return () => buscar(actual);
}
