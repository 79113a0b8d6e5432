// Bandeja del encargado: tarjetas de las aprobaciones pendientes de su tienda, que se
// actualizan solas (consulta cada pocos segundos), y las decisiones que cada operación admite.
// Los textos del cliente (motivo, mensajes retenidos) se pintan con textContent.
import { CLAVES, api, datosToken, duracion, el, ErrorApi, euros, fecha, tokenDeSesion, pedirToken } from "./comun.js";

const $ = (id) => document.getElementById(id);
const CADA_MS = 4000;
// Etiquetas por nombre de argumento (nunca por herramienta): el título de cada operación y
// los campos que se pueden editar llegan en la API, del registro de herramientas.
const ETIQUETAS = { pedido: "Pedido", importe: "Importe", lineas: "Líneas", motivo: "Motivo del cliente",
  sku_original: "Producto original", sku_nuevo: "Producto nuevo", pregunta: "Pregunta" };
const DINERO = new Set(["importe"]);
const BOTONES = { approve: "Aprobar", edit: "Editar importe", reject: "Rechazar con motivo", respond: "Responder" };
const estado = { token: null, tarjetas: new Map(), temporizador: null, cargando: false };
let contador = 0;

function mostrarNota(texto) {
  $("nota").textContent = texto || "";
  $("nota").hidden = !texto;
}

function enlaceSeguro(url) {
  return typeof url === "string" && /^https?:\/\//i.test(url) ? url : null;
}

function textoArgumento(campo, valor) {
  if (DINERO.has(campo)) return euros(valor);
  if (Array.isArray(valor)) return valor.join(", ");
  return typeof valor === "object" ? JSON.stringify(valor) : String(valor);
}

function datosAccion(accion) {
  const filas = [];
  for (const [campo, valor] of Object.entries(accion.args || {})) {
    if (valor === undefined || valor === null || valor === "") continue;
    filas.push(el("dt", {}, ETIQUETAS[campo] || campo), el("dd", {}, textoArgumento(campo, valor)));
  }
  return el("dl", { class: "datos" }, filas);
}

function etiquetaEdicion(campo) {
  return DINERO.has(campo) ? `Nuevo ${(ETIQUETAS[campo] || campo).toLowerCase()} (EUR)` : `Nuevo valor: ${ETIQUETAS[campo] || campo}`;
}

/** Los controles de una operación: un botón por decisión permitida y su campo. */
function controlesAccion(tarjeta, accion, indice) {
  const id = `${tarjeta.dataset.n}-${indice}`;
  const contenedor = el("div", { class: "decision", role: "group", "aria-label": `Decisión: ${accion.titulo || accion.nombre}` });
  const botones = el("div", { class: "botones" });
  const campos = el("div", { class: "campos" });
  const eleccion = { tipo: null, campo: null };
  tarjeta._elecciones[indice] = eleccion;

  const campoPara = (tipo) => {
    if (tipo === "edit") {
      return el("div", { class: "campos-edicion" }, (accion.campos_editables || []).map((campo) =>
        el("p", { class: "campo" },
          el("label", { for: `${campo}-${id}` }, etiquetaEdicion(campo)),
          el("input", { id: `${campo}-${id}`, name: campo, inputmode: DINERO.has(campo) ? "decimal" : "text",
            autocomplete: "off", value: accion.args?.[campo] ?? "", required: true }))));
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
    boton.addEventListener("click", () => {
      for (const b of botones.children) b.setAttribute("aria-pressed", String(b === boton));
      eleccion.tipo = tipo;
      eleccion.campo = campoPara(tipo);
      campos.replaceChildren(...(eleccion.campo ? [eleccion.campo] : []));
      eleccion.campo?.querySelector("input, textarea")?.focus();
      actualizarEnvio(tarjeta);
    });
    botones.append(boton);
  }
  contenedor.append(botones, campos);
  return contenedor;
}

function actualizarEnvio(tarjeta) {
  const listo = tarjeta._elecciones.every((e) => e.tipo);
  tarjeta.querySelector(".enviar").disabled = !listo || tarjeta.dataset.enviando === "1";
}

function decisiones(tarjeta) {
  return tarjeta._aprobacion.acciones.map((accion, i) => {
    const e = tarjeta._elecciones[i];
    const valor = e.campo?.querySelector("input, textarea")?.value.trim() ?? "";
    if (e.tipo === "approve") return { type: "approve" };
    if (e.tipo === "reject") return { type: "reject", message: valor };
    if (e.tipo === "respond") return { type: "respond", message: valor };
    const args = { ...accion.args };
    for (const campo of e.campo?.querySelectorAll("input") ?? []) {
      const texto = campo.value.trim();
      args[campo.name] = DINERO.has(campo.name) ? texto.replace(/\s|EUR|€/gi, "").replace(",", ".") : texto;
    }
    return { type: "edit", edited_action: { name: accion.nombre, args } };
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
  tarjeta.dataset.enviando = "1";
  actualizarEnvio(tarjeta);
  resultado.textContent = "Enviando la decisión…";
  try {
    const r = await api(`/api/aprobaciones/${encodeURIComponent(tarjeta.dataset.thread)}/decision`, {
      metodo: "POST", token: estado.token, cuerpo: { decisiones: decisiones(tarjeta) },
    });
    tarjeta.classList.add("resuelta");
    tarjeta.dataset.resuelta = "1";
    for (const control of tarjeta.querySelectorAll("button, input, textarea")) control.disabled = true;
    resultado.replaceChildren(
      el("strong", {}, "Decisión aplicada. "),
      "Mensaje enviado al cliente: ",
      el("q", { class: "mensaje-cliente" }, r.mensaje_cliente),
      " ",
      el("button", { type: "button", class: "secundario", onclick: () => quitarTarjeta(tarjeta) }, "Cerrar"),
    );
    resultado.querySelector("button").disabled = false;
  } catch (e) {
    if (e instanceof ErrorApi && e.estado === 401) return salir("Tu sesión ha caducado.");
    resultado.textContent = e.detalle || "No se ha podido enviar la decisión.";
    if (e instanceof ErrorApi && [403, 404, 409].includes(e.estado)) refrescar();
  } finally {
    delete tarjeta.dataset.enviando;
    if (!tarjeta.dataset.resuelta) actualizarEnvio(tarjeta);
  }
}

function quitarTarjeta(tarjeta) {
  estado.tarjetas.delete(tarjeta.dataset.thread);
  tarjeta.remove();
  $("vacia").hidden = estado.tarjetas.size > 0;
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

function crearTarjeta(aprobacion) {
  const n = ++contador;
  const tarjeta = el("article", { class: "tarjeta", "data-thread": aprobacion.thread_id, "data-n": n,
    "aria-labelledby": `titulo-${n}` });
  tarjeta._aprobacion = aprobacion;
  tarjeta._elecciones = [];
  const traza = enlaceSeguro(aprobacion.traza_url);
  tarjeta.append(
    el("header", { class: "cabecera-tarjeta" },
      el("h3", { id: `titulo-${n}` }, `${aprobacion.cliente.nombre} (${aprobacion.cliente.id})`),
      el("p", { class: "espera" },
        "Esperando ", el("span", { class: "tiempo" }, duracion(aprobacion.espera_segundos)),
        ` · desde ${fecha(aprobacion.creada)}`),
      el("p", { class: "estado-tarjeta", role: "status" })),
  );
  aprobacion.acciones.forEach((accion, i) => {
    const motivos = accion.motivos.length
      ? el("div", { class: "motivos" }, el("p", { class: "subtitulo" }, "Por qué necesita tu firma:"),
        el("ul", {}, accion.motivos.map((m) => el("li", {}, m))))
      : null;
    tarjeta.append(el("section", { class: "accion", "aria-label": accion.titulo || accion.nombre },
      el("h4", {}, accion.titulo || accion.nombre),
      datosAccion(accion),
      motivos,
      accion.descripcion ? el("details", { open: true }, el("summary", {}, "Detalle del pedido"),
        el("p", { class: "descripcion" }, accion.descripcion)) : null,
      controlesAccion(tarjeta, accion, i)));
  });
  tarjeta.append(bloqueRetenidos(aprobacion));
  tarjeta.append(el("footer", { class: "pie-tarjeta" },
    traza ? el("a", { href: traza, target: "_blank", rel: "noopener noreferrer" }, "Ver traza") : null,
    el("button", { type: "button", class: "enviar", disabled: true, onclick: () => enviarDecision(tarjeta) },
      "Enviar decisión"),
    el("p", { class: "resultado", role: "status", "aria-live": "polite" })));
  actualizarTarjeta(tarjeta, aprobacion);
  return tarjeta;
}

function actualizarTarjeta(tarjeta, aprobacion) {
  tarjeta.querySelector(".tiempo").textContent = duracion(aprobacion.espera_segundos);
  const decidiendo = aprobacion.estado === "decidiendo" && !tarjeta.dataset.enviando;
  tarjeta.querySelector(".estado-tarjeta").textContent = decidiendo ? "Otro encargado la está decidiendo ahora." : "";
  // Los mensajes retenidos pueden crecer mientras espera: se repinta solo esa parte.
  if (aprobacion.mensajes_retenidos.length !== tarjeta._aprobacion.mensajes_retenidos.length) {
    tarjeta.querySelector(".retenidos").replaceWith(bloqueRetenidos(aprobacion));
  }
  tarjeta._aprobacion = { ...tarjeta._aprobacion, espera_segundos: aprobacion.espera_segundos,
    estado: aprobacion.estado, mensajes_retenidos: aprobacion.mensajes_retenidos };
}

async function refrescar() {
  if (estado.cargando) return;
  estado.cargando = true;
  try {
    const lista = await api("/api/aprobaciones", { token: estado.token });
    mostrarNota("");
    const vistas = new Set();
    let anterior = null;
    for (const aprobacion of lista) {
      vistas.add(aprobacion.thread_id);
      let tarjeta = estado.tarjetas.get(aprobacion.thread_id);
      if (tarjeta) actualizarTarjeta(tarjeta, aprobacion);
      else {
        tarjeta = crearTarjeta(aprobacion);
        estado.tarjetas.set(aprobacion.thread_id, tarjeta);
      }
      // Orden del servidor (la más antigua primero), sin recrear las que ya están.
      if (anterior) anterior.after(tarjeta);
      else $("tarjetas").prepend(tarjeta);
      anterior = tarjeta;
    }
    for (const [thread, tarjeta] of estado.tarjetas) {
      if (!vistas.has(thread) && !tarjeta.dataset.resuelta && !tarjeta.dataset.enviando) quitarTarjeta(tarjeta);
    }
    $("vacia").hidden = estado.tarjetas.size > 0;
    $("actualizado").textContent = `Actualizado a las ${new Date().toLocaleTimeString("es-ES")}`;
    document.body.dataset.listo = "1";
  } catch (e) {
    if (e instanceof ErrorApi && (e.estado === 401 || e.estado === 403)) return salir(e.detalle);
    mostrarNota(e.detalle || "No se ha podido actualizar la bandeja.");
  } finally {
    estado.cargando = false;
  }
}

function salir(motivo) {
  sessionStorage.removeItem(CLAVES.encargado);
  if (motivo) sessionStorage.setItem("agente.motivo", motivo);
  clearInterval(estado.temporizador);
  location.replace(location.pathname);
}

function iniciar() {
  estado.token = tokenDeSesion(CLAVES.encargado);
  const datos = estado.token && datosToken(estado.token);
  if (!datos || datos.rol !== "encargado") return pedirToken(CLAVES.encargado);
  $("sesion").textContent = `Encargado ${datos.encargado_id} · tienda ${datos.tienda}`;
  $("bandeja").hidden = false;
  $("salir").hidden = false;
  $("salir").addEventListener("click", () => salir());
  refrescar();
  estado.temporizador = setInterval(refrescar, CADA_MS);
}

iniciar();
