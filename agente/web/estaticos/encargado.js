// Bandeja del encargado: tarjetas de las aprobaciones pendientes de su tienda, en vivo por SSE
// (/api/aprobaciones/eventos: sin sondeos), con su ficha (transcripción, historial, libro),
// «lo atiendo yo», nota para el cliente, filtros, atajos de teclado y la pestaña de historial.
// Los textos del cliente (motivo, mensajes) se pintan con textContent.
import { CLAVES, abrirFlujo, api, datosToken, duracion, el, ErrorApi, euros, fecha, tokenDeSesion, pedirToken } from "./comun.js";
import { mostrarEntradas, programarRenovacion } from "./encargado_sesion.js";
import { bloqueFicha, bloqueFirmas, textoPlazo, textoReclamo } from "./encargado_ficha.js";
import { iniciarHistorial } from "./encargado_historial.js";
import { iniciarMovimientos } from "./encargado_movimientos.js";
import { iniciarSolicitudesPolitica } from "./encargado_politica.js";
import { iniciarConversaciones } from "./encargado_conversaciones.js";
import { iniciarPaginaPolitica } from "./encargado_politica_pagina.js";
import { iniciarPaginaAlta } from "./encargado_alta.js";
import { bloqueAvisoFirma, firmaPropia, pintarMiFirma, textoSesion } from "./encargado_firma.js";

const $ = (id) => document.getElementById(id);
const TITULO = document.title;
// El título de cada operación, la etiqueta de cada argumento (y si es dinero) y los campos que
// se pueden editar llegan en la API (accion.campos), de la operación declarada: nada por
// herramienta aquí. Un argumento sin etiqueta se enseña con su nombre.
const campoDe = (accion, campo) => (accion.campos || []).find((c) => c.campo === campo);
const etiqueta = (accion, campo) => campoDe(accion, campo)?.etiqueta || campo;
const esDinero = (accion, campo) => Boolean(campoDe(accion, campo)?.dinero);
// El campo de un importe se rellena como lo escribe una persona («120,00») y se lee con coma o
// punto decimal («1.234,50» también); a la API va con punto («1234.50»).
const valorEditable = (accion, campo) => {
  const valor = accion.args?.[campo] ?? "";
  return esDinero(accion, campo) ? String(valor).replace(".", ",") : valor;
};
const importeEscrito = (texto) => {
  const limpio = texto.replace(/\s|EUR|€/gi, "");
  return limpio.includes(",") ? limpio.replace(/\.(?=\d{3}(\D|$))/g, "").replace(",", ".") : limpio;
};
const BOTONES = { approve: "Aprobar", edit: "Editar importe", reject: "Rechazar con motivo", respond: "Responder" };
const ATAJOS = { a: "approve", e: "edit", r: "reject" };
const CON_NOTA = new Set(["approve", "edit", "reject"]);
const estado = { token: null, yo: null, perfil: null, tarjetas: new Map(), fuente: null, primera: true, pendientes: 0 };
let contador = 0;

function mostrarNota(texto) {
  $("nota").textContent = texto || "";
  $("nota").hidden = !texto;
}

function enlaceSeguro(url) {
  return typeof url === "string" && /^https?:\/\//i.test(url) ? url : null;
}

function textoArgumento(accion, campo, valor) {
  if (esDinero(accion, campo)) return euros(valor);
  if (accion.legibles?.[campo]) return accion.legibles[campo]; // el producto por su nombre, no su SKU
  if (Array.isArray(valor)) return valor.join(", ");
  return typeof valor === "object" ? JSON.stringify(valor) : String(valor);
}

function datosAccion(accion) {
  const filas = [];
  for (const [campo, valor] of Object.entries(accion.args || {})) {
    if (valor === undefined || valor === null || valor === "") continue;
    filas.push(el("dt", {}, etiqueta(accion, campo)), el("dd", {}, textoArgumento(accion, campo, valor)));
  }
  return el("dl", { class: "datos" }, filas);
}

function etiquetaEdicion(accion, campo) {
  return esDinero(accion, campo) ? `Nuevo ${etiqueta(accion, campo).toLowerCase()} (EUR)` : `Nuevo valor: ${etiqueta(accion, campo)}`;
}

/** Los controles de una operación: un botón por decisión permitida y su campo. */
function controlesAccion(tarjeta, accion, indice) {
  const id = `${tarjeta.dataset.n}-${indice}`;
  const contenedor = el("div", { class: "decision", role: "group", "aria-label": `Decisión: ${accion.titulo || accion.nombre}` });
  const botones = el("div", { class: "botones" });
  const campos = el("div", { class: "campos" });
  const eleccion = { tipo: null, campo: null, elegir: null };
  tarjeta._elecciones[indice] = eleccion;

  const campoPara = (tipo) => {
    if (tipo === "edit") {
      const firmada = (tarjeta._aprobacion.firmas || []).length > 0;
      return el("div", { class: "campos-edicion" }, firmada
        ? el("p", { class: "pista" }, "Ya hay firmas: puedes bajar el importe, nunca subirlo, y las firmas dadas cuentan para el importe menor.")
        : null, (accion.campos_editables || []).map((campo) =>
        el("p", { class: "campo" },
          el("label", { for: `${campo}-${id}` }, etiquetaEdicion(accion, campo)),
          el("input", { id: `${campo}-${id}`, name: campo, inputmode: esDinero(accion, campo) ? "decimal" : "text",
            autocomplete: "off", value: valorEditable(accion, campo), required: true }))));
    }
    if (tipo === "reject") {
      return el("p", { class: "campo" },
        el("label", { for: `motivo-${id}` }, "Motivo del rechazo (lo leerá el cliente)"),
        el("textarea", { id: `motivo-${id}`, name: "motivo", rows: 2, maxlength: 2000, required: true }));
    }
    if (tipo === "respond") {
      return el("p", { class: "campo" },
        el("label", { for: `respuesta-${id}` }, "Respuesta para el cliente"),
        el("textarea", { id: `respuesta-${id}`, name: "respuesta", rows: 3, maxlength: 2000, required: true }));
    }
    return null;
  };

  for (const tipo of accion.decisiones_permitidas) {
    const boton = el("button", { type: "button", class: `eleccion ${tipo}`, "aria-pressed": "false", "data-tipo": tipo },
      BOTONES[tipo] || tipo);
    const elegir = () => {
      for (const b of botones.children) b.setAttribute("aria-pressed", String(b === boton));
      eleccion.tipo = tipo;
      eleccion.campo = campoPara(tipo);
      campos.replaceChildren(...(eleccion.campo ? [eleccion.campo] : []));
      eleccion.campo?.querySelector("input, textarea")?.focus();
      actualizarEnvio(tarjeta);
    };
    boton.addEventListener("click", elegir);
    boton._elegir = elegir;
    boton._soltar = () => {
      boton.setAttribute("aria-pressed", "false");
      eleccion.tipo = null;
      eleccion.campo = null;
      campos.replaceChildren();
      actualizarEnvio(tarjeta);
    };
    botones.append(boton);
  }
  contenedor.append(botones, campos);
  return contenedor;
}

function actualizarEnvio(tarjeta) {
  const listo = tarjeta._elecciones.every((e) => e.tipo);
  tarjeta.querySelector(".enviar").disabled = !listo || tarjeta.dataset.enviando === "1";
  // La nota para el cliente, con cualquier decisión que acaba en un mensaje suyo (no «responder»).
  tarjeta.querySelector(".bloque-nota").hidden = !tarjeta._elecciones.some((e) => CON_NOTA.has(e.tipo));
}

/** Una decisión por operación, en su orden; cada una nombra su operación (``tool_call_id``)
 * para que el servidor compruebe el orden. */
function decisiones(tarjeta) {
  return tarjeta._aprobacion.acciones.map((accion, i) => {
    const e = tarjeta._elecciones[i];
    const valor = e.campo?.querySelector("input, textarea")?.value.trim() ?? "";
    const de = accion.tool_call_id ? { tool_call_id: accion.tool_call_id } : {};
    if (e.tipo === "approve") return { type: "approve", ...de };
    if (e.tipo === "reject") return { type: "reject", message: valor, ...de };
    if (e.tipo === "respond") return { type: "respond", message: valor, ...de };
    const args = { ...accion.args };
    for (const campo of e.campo?.querySelectorAll("input") ?? []) {
      const texto = campo.value.trim();
      args[campo.name] = esDinero(accion, campo.name) ? importeEscrito(texto) : texto;
    }
    return { type: "edit", edited_action: { name: accion.nombre, args }, ...de };
  });
}

async function enviarDecision(tarjeta) {
  const resultado = tarjeta.querySelector(".resultado");
  for (const [i, e] of tarjeta._elecciones.entries()) {
    const campo = e.campo?.querySelector("input, textarea");
    if (campo && !campo.value.trim()) {
      resultado.textContent = `Completa el campo de la operación ${i + 1}.`;
      campo.focus();
      return;
    }
  }
  const cuerpo = { decisiones: decisiones(tarjeta) };
  const nota = tarjeta.querySelector(".bloque-nota textarea");
  if (!tarjeta.querySelector(".bloque-nota").hidden && nota.value.trim()) cuerpo.nota = nota.value.trim();
  tarjeta.dataset.enviando = "1";
  actualizarEnvio(tarjeta);
  resultado.textContent = "Enviando la decisión…";
  try {
    const r = await api(`/api/aprobaciones/${encodeURIComponent(tarjeta.dataset.thread)}/decision`, {
      metodo: "POST", token: estado.token, cuerpo,
    });
    if (r.estado === "esperando_firmas") {
      // Firma parcial (autoridad escalonada): la tarjeta pasa a «Firmada por ti», sin «Aprobar»;
      // la ficha trae enseguida las firmas y lo que falta.
      resultado.textContent = `Firma registrada: ${r.firmas} de ${r.firmas_necesarias}. Falta otra firma.`;
      const faltan = r.firmas_necesarias - r.firmas;
      tarjeta._aprobacion.mi_firma = { puede: false, ya_firmada: true, motivo: null, falta: `${faltan} firma${faltan > 1 ? "s" : ""}` };
      pintarMiFirma(tarjeta, BOTONES);
      colocar(tarjeta);
      cargarFicha(tarjeta);
      return;
    }
    // La última firma: el recuento de la tarjeta la cuenta («2 de 2»).
    const tipos = cuerpo.decisiones.map((d) => d.type);
    if (r.estado === "aplicada" && !tipos.includes("reject") && !tipos.includes("respond")) {
      const firmas = [...(tarjeta._aprobacion.firmas || []), firmaPropia(estado.perfil, tipos.includes("edit") ? "edit" : "approve")];
      tarjeta._aprobacion = { ...tarjeta._aprobacion, firmas };
      tarjeta.querySelector(".firmas").replaceWith(bloqueFirmas(tarjeta._aprobacion));
    }
    tarjeta.classList.add("resuelta");
    tarjeta.dataset.resuelta = "1";
    contar();
    for (const control of tarjeta.querySelectorAll("button, input, textarea")) control.disabled = true;
    resultado.replaceChildren(
      r.estado === "fallida"
        ? el("strong", { class: "fallida" }, `La operación no se pudo hacer: ${r.fallo}. `)
        : el("strong", {}, "Decisión aplicada. "),
      "Mensaje enviado al cliente: ",
      el("q", { class: "mensaje-cliente" }, r.mensaje_cliente),
      " ",
      el("button", { type: "button", class: "secundario", onclick: () => quitarTarjeta(tarjeta) }, "Cerrar"),
    );
    resultado.querySelector("button").disabled = false;
  } catch (e) {
    if (e instanceof ErrorApi && e.estado === 401) return salir("Tu sesión ha caducado.");
    resultado.textContent = e.detalle || "No se ha podido enviar la decisión.";
  } finally {
    delete tarjeta.dataset.enviando;
    if (!tarjeta.dataset.resuelta) actualizarEnvio(tarjeta);
  }
}

function quitarTarjeta(tarjeta) {
  estado.tarjetas.delete(tarjeta.dataset.thread);
  tarjeta.remove();
  filtrar();
}

async function cargarFicha(tarjeta) {
  try {
    const ficha = await api(`/api/aprobaciones/${encodeURIComponent(tarjeta.dataset.thread)}`, { token: estado.token });
    tarjeta.querySelector(".ficha").replaceWith(bloqueFicha(ficha));
    tarjeta.querySelector(".firmas").replaceWith(bloqueFirmas(ficha));
    if (ficha.mi_firma && !tarjeta.dataset.resuelta) {
      tarjeta._aprobacion = { ...tarjeta._aprobacion, firmas: ficha.firmas, mi_firma: ficha.mi_firma };
      pintarMiFirma(tarjeta, BOTONES);
      colocar(tarjeta);
    }
  } catch (e) {
    if (!(e instanceof ErrorApi) || e.estado !== 404) tarjeta.querySelector(".ficha").textContent = e.detalle || "";
  }
}

async function reclamar(tarjeta, soltar) {
  const hilo = encodeURIComponent(tarjeta.dataset.thread);
  try {
    await api(`/api/aprobaciones/${hilo}/reclamar`, { metodo: soltar ? "DELETE" : "POST", token: estado.token });
  } catch (e) {
    tarjeta.querySelector(".resultado").textContent = e.detalle || "No se ha podido.";
  }
}

function pintarReclamo(tarjeta, reclamada) {
  const mia = reclamada && reclamada.encargado === estado.yo;
  tarjeta.querySelector(".reclamo").textContent = textoReclamo(reclamada, estado.yo);
  const boton = tarjeta.querySelector(".reclamar");
  boton.textContent = mia ? "Soltar" : "Lo atiendo yo";
  boton.dataset.soltar = mia ? "1" : "";
  boton.disabled = Boolean(reclamada && !mia);
  tarjeta.classList.toggle("de-otro", Boolean(reclamada && !mia));
}

function crearTarjeta(aprobacion) {
  const n = ++contador;
  const tarjeta = el("article", { class: "tarjeta", "data-thread": aprobacion.thread_id, "data-n": n,
    tabindex: 0, "aria-labelledby": `titulo-${n}` });
  tarjeta._aprobacion = aprobacion;
  tarjeta._elecciones = [];
  const traza = enlaceSeguro(aprobacion.traza_url);
  tarjeta.append(
    el("header", { class: "cabecera-tarjeta" },
      el("h3", { id: `titulo-${n}` }, `${aprobacion.cliente.nombre} (${aprobacion.cliente.id})`),
      el("p", { class: "tienda-tarjeta" }, "Tienda: ", el("strong", {}, aprobacion.tienda_nombre || aprobacion.tienda)),
      el("p", { class: "espera" },
        "Esperando ", el("span", { class: "tiempo" }, duracion(aprobacion.espera_segundos)),
        ` · desde ${fecha(aprobacion.creada)}`),
      el("p", { class: "plazo" }, textoPlazo(aprobacion.caduca, aprobacion.plazo_fuera_de_rango)),
      bloqueFirmas(aprobacion),
      el("p", { class: "linea-reclamo" }, el("span", { class: "reclamo" }),
        el("button", { type: "button", class: "secundario reclamar",
          onclick: (ev) => reclamar(tarjeta, ev.currentTarget.dataset.soltar === "1") }, "Lo atiendo yo")),
      el("p", { class: "estado-tarjeta", role: "status" })),
  );
  // En escritorio, dos columnas (CSS grid): la conversación y el pedido a un lado, la decisión
  // al otro; en el móvil, apiladas (primero la decisión).
  const decision = el("div", { class: "lado-decision" });
  const conversacion = el("div", { class: "lado-conversacion" });
  tarjeta.append(el("div", { class: "cuerpo-tarjeta" }, decision, conversacion));
  aprobacion.acciones.forEach((accion, i) => {
    const motivos = accion.motivos.length
      ? el("div", { class: "motivos" }, el("p", { class: "subtitulo" }, "Por qué necesita tu firma:"),
        el("ul", {}, accion.motivos.map((m) => el("li", {}, m))))
      : null;
    // Con varias operaciones, cada una lleva su número y su propia decisión.
    const numero = aprobacion.acciones.length > 1 ? `Operación ${i + 1} de ${aprobacion.acciones.length}: ` : "";
    decision.append(el("section", { class: "accion", "aria-label": `${numero}${accion.titulo || accion.nombre}` },
      el("h4", {}, `${numero}${accion.titulo || accion.nombre}`),
      datosAccion(accion),
      motivos,
      accion.descripcion ? el("details", {}, el("summary", {}, "Detalle de la propuesta"),
        el("p", { class: "descripcion" }, accion.descripcion)) : null,
      controlesAccion(tarjeta, accion, i)));
  });
  conversacion.append(bloqueRetenidos(aprobacion), el("div", { class: "ficha" }, "Cargando la conversación…"));
  decision.append(bloqueAvisoFirma());
  decision.append(el("p", { class: "campo bloque-nota", hidden: true },
    el("label", { for: `nota-${n}` }, "Nota para el cliente (opcional; se añade al mensaje final)"),
    el("textarea", { id: `nota-${n}`, rows: 2, maxlength: 2000 })));
  decision.append(el("footer", { class: "pie-tarjeta" },
    traza ? el("a", { href: traza, target: "_blank", rel: "noopener noreferrer" }, "Ver traza") : null,
    el("button", { type: "button", class: "enviar", disabled: true, onclick: () => enviarDecision(tarjeta) },
      "Enviar decisión"),
    el("p", { class: "resultado", role: "status", "aria-live": "polite" })));
  actualizarTarjeta(tarjeta, aprobacion);
  cargarFicha(tarjeta);
  return tarjeta;
}

function bloqueRetenidos(aprobacion) {
  const bloque = el("div", { class: "retenidos" });
  if (aprobacion.mensajes_retenidos.length) {
    bloque.append(
      el("p", { class: "subtitulo" }, "Mensajes del cliente mientras esperaba:"),
      el("ul", {}, aprobacion.mensajes_retenidos.map((m) => el("li", {},
        el("span", { class: "texto-cliente" }, m.texto),
        el("span", { class: "fecha" }, ` (${fecha(m.fecha)})`)))));
  }
  return bloque;
}

function actualizarTarjeta(tarjeta, aprobacion) {
  tarjeta.querySelector(".tiempo").textContent = duracion(aprobacion.espera_segundos);
  tarjeta.querySelector(".plazo").textContent = textoPlazo(aprobacion.caduca, aprobacion.plazo_fuera_de_rango);
  const decidiendo = aprobacion.estado === "decidiendo" && !tarjeta.dataset.enviando;
  tarjeta.querySelector(".estado-tarjeta").textContent = decidiendo ? "Otro encargado la está decidiendo ahora." : "";
  pintarReclamo(tarjeta, aprobacion.reclamada);
  const retenidos = aprobacion.mensajes_retenidos.length !== tarjeta._aprobacion.mensajes_retenidos.length;
  if (retenidos) tarjeta.querySelector(".retenidos").replaceWith(bloqueRetenidos(aprobacion));
  // La transcripción creció: un retenido o alguien de la tienda que escribió al cliente.
  if (retenidos || aprobacion.ultimo_mensaje_tienda !== tarjeta._aprobacion.ultimo_mensaje_tienda) cargarFicha(tarjeta);
  if (aprobacion.firmas || aprobacion.requisito) tarjeta.querySelector(".firmas").replaceWith(bloqueFirmas(aprobacion));
  tarjeta._aprobacion = { ...tarjeta._aprobacion, ...aprobacion, recibida: Date.now() };
  if (!tarjeta.dataset.resuelta && !tarjeta.dataset.enviando) pintarMiFirma(tarjeta, BOTONES);
}

/** La firmada por ti (falta la de otra persona) va a su sección; las demás, a «Pendientes». */
const contenedorDe = (tarjeta) => $(tarjeta._aprobacion.mi_firma?.ya_firmada ? "tarjetas-firmadas" : "tarjetas");

function colocar(tarjeta) {
  const destino = contenedorDe(tarjeta);
  if (tarjeta.parentElement !== destino) destino.append(tarjeta);
  filtrar();
}

function avisarNueva() {
  if (!$("sonido").checked) return;
  try {
    const audio = new AudioContext();
    const tono = audio.createOscillator();
    tono.frequency.value = 880;
    tono.connect(audio.destination);
    tono.start();
    tono.stop(audio.currentTime + 0.15);
  } catch (e) { /* sin audio: solo el título */ }
}

/** La lista del servidor (evento «bandeja»): crea, actualiza y quita tarjetas en su orden. */
function aplicarLista(lista) {
  mostrarNota("");
  const vistas = new Set();
  const anteriores = new Map();
  let nuevas = 0;
  for (const aprobacion of lista) {
    vistas.add(aprobacion.thread_id);
    let tarjeta = estado.tarjetas.get(aprobacion.thread_id);
    if (tarjeta) actualizarTarjeta(tarjeta, aprobacion);
    else {
      tarjeta = crearTarjeta(aprobacion);
      estado.tarjetas.set(aprobacion.thread_id, tarjeta);
      nuevas += 1;
    }
    if (tarjeta.dataset.resuelta) continue; // se queda donde está, con su resultado
    const destino = contenedorDe(tarjeta);
    if (anteriores.has(destino)) anteriores.get(destino).after(tarjeta);
    else destino.prepend(tarjeta);
    anteriores.set(destino, tarjeta);
  }
  for (const [thread, tarjeta] of estado.tarjetas) {
    if (!vistas.has(thread) && !tarjeta.dataset.resuelta && !tarjeta.dataset.enviando) quitarTarjeta(tarjeta);
  }
  if (nuevas && !estado.primera) avisarNueva();
  estado.primera = false;
  rellenarFiltros(lista);
  filtrar();
  $("actualizado").textContent = `En directo · actualizado a las ${new Date().toLocaleTimeString("es-ES")}`;
  document.body.dataset.listo = "1";
}

function rellenarFiltros(lista) {
  const opciones = (id, valores, nombres = {}) => {
    const select = $(id);
    const actual = select.value;
    select.replaceChildren(select.options[0], ...[...valores].sort().map((v) => el("option", { value: v }, nombres[v] || v)));
    select.value = [...valores].includes(actual) ? actual : "";
  };
  opciones("f-herramienta", new Set(lista.flatMap((a) => a.acciones.map((x) => x.titulo || x.nombre))));
  const tiendas = new Set(lista.map((a) => a.tienda));
  opciones("f-tienda", tiendas, Object.fromEntries(lista.map((a) => [a.tienda, a.tienda_nombre])));
  $("campo-tienda").hidden = tiendas.size < 2;
}

function numero(texto) {
  const limpio = String(texto || "").replace(/\s|EUR|€/gi, "").replace(",", ".");
  return limpio === "" ? null : Number(limpio);
}

function cumple(a) {
  const buscar = $("f-buscar").value.trim().toLowerCase();
  const herramienta = $("f-herramienta").value;
  const tienda = $("f-tienda").value;
  const [min, max] = [numero($("f-min").value), numero($("f-max").value)];
  const espera = Number($("f-espera").value);
  const pedidos = a.acciones.map((x) => String(x.args?.pedido || "")).join(" ");
  const texto = `${a.cliente.nombre} ${a.cliente.id} ${a.thread_id} ${pedidos}`.toLowerCase();
  // Los importes: los argumentos que la operación declara como dinero.
  const importes = a.acciones.flatMap((x) => (x.campos || []).filter((c) => c.dinero)
    .map((c) => numero(x.args?.[c.campo]))).filter((v) => v !== null);
  const enRango = (v) => (min === null || v >= min) && (max === null || v <= max);
  const esperando = a.espera_segundos + (Date.now() - (a.recibida || Date.now())) / 1000;
  return (!buscar || texto.includes(buscar))
    && (!herramienta || a.acciones.some((x) => (x.titulo || x.nombre) === herramienta))
    && (!tienda || a.tienda === tienda)
    && ((min === null && max === null) || importes.some(enRango))
    && esperando >= espera;
}

/** Lo que espera TU firma, en la pestaña y el título: ni las ya decididas ni las que ya
 * firmaste (falta la de otra persona); con las solicitudes de política que puedes firmar. */
function contar() {
  const mias = [...estado.tarjetas.values()]
    .filter((t) => !t.dataset.resuelta && !t._aprobacion.mi_firma?.ya_firmada).length;
  estado.pendientes = mias;
  const total = mias + (estado.solicitudesPolitica || 0);
  $("cuenta").textContent = String(total);
  document.title = total ? `(${total}) ${TITULO}` : TITULO;
}

function filtrar() {
  contar();
  let visibles = 0;
  for (const tarjeta of estado.tarjetas.values()) {
    const ver = Boolean(tarjeta.dataset.resuelta) || cumple(tarjeta._aprobacion);
    tarjeta.hidden = !ver;
    if (ver) visibles += 1;
  }
  $("vacia").hidden = $("tarjetas").children.length > 0;
  $("filtrada").hidden = !(estado.tarjetas.size > 0 && visibles === 0);
  $("firmadas").hidden = $("tarjetas-firmadas").children.length === 0;
}

function tokenVigente() {
  const datos = datosToken(estado.token);
  return Boolean(datos && datos.exp * 1000 > Date.now() + 5000);
}

// El flujo va con el token en la cabecera (fetch), nunca en la URL.
function abrirEventos() {
  if (estado.fuente) estado.fuente.close();
  let terminado = false;
  estado.fuente = abrirFlujo("/api/aprobaciones/eventos", estado.token, (tipo, datos) => {
    if (tipo === "bandeja") aplicarLista(datos.aprobaciones);
    // El servidor cierra el flujo si ya no tienes acceso: de baja o token caducado, fuera;
    // sin una de tus tiendas, se reabre (con las que te quedan, o 403 y fuera). Si el token
    // del flujo caducó pero la sesión ya se renovó, se reabre con el nuevo.
    if (tipo !== "fin") return;
    terminado = true;
    if (datos.motivo === "sin_tienda") setTimeout(abrirEventos, 1000);
    else if (datos.motivo === "caducado" && tokenVigente()) abrirEventos();
    else salir(datos.motivo === "caducado" ? "Tu sesión ha caducado." : datos.detalle);
  }, (error) => {
    if (terminado) return;
    if (error && [401, 403].includes(error.estado)) return salir(error.detalle);
    if (error && error.estado) mostrarNota("Se ha perdido la conexión en directo; reconectando…");
    setTimeout(abrirEventos, error ? 3000 : 1000); // como EventSource: se reconecta solo
  });
}

function atajo(ev) {
  if (ev.target.closest("input, textarea, select") && !(ev.ctrlKey && ev.key === "Enter")) return;
  const tarjeta = document.activeElement?.closest?.("article.tarjeta");
  const visibles = [...document.querySelectorAll("#tarjetas article.tarjeta:not([hidden]), #tarjetas-firmadas article.tarjeta:not([hidden])")];
  if (ev.key === "j" || ev.key === "k") {
    const i = tarjeta ? visibles.indexOf(tarjeta) : -1;
    const siguiente = visibles[Math.max(0, Math.min(visibles.length - 1, i + (ev.key === "j" ? 1 : -1)))];
    siguiente?.focus();
    ev.preventDefault();
    return;
  }
  if (!tarjeta || tarjeta.dataset.resuelta) return;
  if (ev.ctrlKey && ev.key === "Enter") {
    tarjeta.querySelector(".enviar:not(:disabled)")?.click();
    ev.preventDefault();
  } else if (ATAJOS[ev.key] && !ev.ctrlKey && !ev.metaKey && !ev.altKey) {
    const boton = tarjeta.querySelector(`.botones button[data-tipo="${ATAJOS[ev.key]}"]`);
    if (boton) { boton._elegir(); ev.preventDefault(); }
  }
}

// Cada pestaña y su panel; ``estado.alAbrir[panel]`` lo que hace al abrirse (si algo).
const PESTANAS = [["tab-pendientes", "bandeja"], ["tab-historial", "historial"], ["tab-movimientos", "movimientos"],
  ["tab-conversaciones", "conversaciones"], ["tab-politica", "politica"], ["tab-alta", "alta"]];

function pestana(cual) {
  for (const [tab, panel] of PESTANAS) {
    const activa = panel === cual;
    $(tab).setAttribute("aria-selected", String(activa));
    $(tab).tabIndex = activa ? 0 : -1;
    $(panel).hidden = !activa;
  }
  estado.alAbrir?.[cual]?.();
}

function salir(motivo) {
  sessionStorage.removeItem(CLAVES.encargado);
  if (motivo) sessionStorage.setItem("agente.motivo", motivo);
  if (estado.fuente) estado.fuente.close();
  location.replace(location.pathname);
}

// «Cerrar sesión»: el token fuera y, si se entró por un proveedor, también allí.
function cerrarSesion() {
  const entrada = datosToken(estado.token)?.ent;
  sessionStorage.removeItem(CLAVES.encargado);
  if (estado.fuente) estado.fuente.close();
  if (entrada && entrada !== "correo") location.replace(`/entrada/salir/${encodeURIComponent(entrada)}`);
  else location.replace(location.pathname);
}

function iniciar() {
  estado.token = tokenDeSesion(CLAVES.encargado);
  const datos = estado.token && datosToken(estado.token);
  if (!datos || datos.rol !== "encargado") return pedirToken(CLAVES.encargado, mostrarEntradas);
  estado.yo = datos.encargado_id;
  $("sesion").textContent = ""; // el nombre llega con /api/sesion: nunca se enseña el id
  // En un móvil los filtros empiezan plegados: la primera tarjeta, en la primera pantalla.
  $("caja-filtros").open = matchMedia("(min-width: 720px)").matches;
  $("pestanas").hidden = false;
  $("bandeja").hidden = false;
  $("salir").hidden = false;
  $("salir").addEventListener("click", cerrarSesion);
  programarRenovacion(estado, { alFallar: salir });
  $("sonido").checked = localStorage.getItem("agente.sonido") === "1";
  $("sonido").addEventListener("change", () => localStorage.setItem("agente.sonido", $("sonido").checked ? "1" : "0"));
  $("filtros").addEventListener("input", filtrar);
  $("filtros").addEventListener("submit", (e) => e.preventDefault());
  for (const [tab, panel] of PESTANAS) $(tab).addEventListener("click", () => pestana(panel));
  $("pestanas").addEventListener("keydown", (e) => {
    if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
      const visibles = PESTANAS.map(([tab]) => $(tab)).filter((t) => !t.hidden);
      const i = visibles.indexOf(e.target) + (e.key === "ArrowRight" ? 1 : -1);
      const otra = visibles[(i + visibles.length) % visibles.length];
      otra.focus();
      otra.click();
    }
  });
  document.addEventListener("keydown", atajo);
  // La sesión se renueva: las partes de la página leen siempre el token vigente.
  estado.historial = iniciarHistorial({ token: () => estado.token, alCaducar: salir });
  estado.movimientos = iniciarMovimientos({ token: () => estado.token, alCaducar: salir });
  estado.alAbrir = {
    historial: () => estado.historial.buscar(),
    movimientos: () => estado.movimientos.buscar(),
    conversaciones: iniciarConversaciones({ token: () => estado.token, alCaducar: salir }),
    politica: iniciarPaginaPolitica({ token: () => estado.token }),
  };
  api("/api/sesion", { token: estado.token }).then((perfil) => {
    estado.perfil = perfil;
    $("sesion").textContent = textoSesion(perfil);
    estado.alAbrir.alta = iniciarPaginaAlta({ token: () => estado.token, perfil });
    estado.historial.tiendas(perfil.tiendas);
    estado.movimientos.tiendas(perfil.tiendas);
  }).catch(() => {});
  iniciarSolicitudesPolitica({ token: () => estado.token, yo: estado.yo,
    alContar: (n) => { estado.solicitudesPolitica = n; contar(); } });
  // El plazo y la espera corren en la página; los datos llegan solos por el flujo.
  setInterval(() => {
    for (const t of estado.tarjetas.values()) {
      if (t.dataset.resuelta) continue;
      const a = t._aprobacion;
      t.querySelector(".tiempo").textContent = duracion(a.espera_segundos + (Date.now() - a.recibida) / 1000);
      t.querySelector(".plazo").textContent = textoPlazo(a.caduca, a.plazo_fuera_de_rango);
    }
  }, 30_000);
  abrirEventos();
}

iniciar();
