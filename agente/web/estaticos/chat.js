// Chat del cliente: historial, respuesta en directo (SSE sobre fetch), estado
// "pendiente de revisión" y respuestas posteriores del encargado (EventSource).
import { CLAVES, api, datosToken, el, ErrorApi, hora, leerEventos, leerRespuesta, tokenDeSesion, pedirToken } from "./comun.js";

const $ = (id) => document.getElementById(id);
const AVISOS = {
  esperando_aprobacion:
    "Tu solicitud está pendiente de revisión por un encargado de la tienda. La respuesta aparecerá aquí en cuanto decida.",
  necesita_persona: "Una persona de la tienda continuará esta conversación.",
};

const estado = { token: null, cliente: null, hilo: null, ultimoId: 0, enviando: false, fuente: null };

function alFinal() {
  const lista = $("mensajes");
  lista.scrollTop = lista.scrollHeight;
}

function claveHilo() {
  return `agente.hilo.${estado.cliente}`;
}

function mostrarNota(texto) {
  const nota = $("nota");
  nota.textContent = texto || "";
  nota.hidden = !texto;
}

function mostrarAviso(estadoHilo) {
  const aviso = $("aviso");
  const texto = AVISOS[estadoHilo];
  aviso.textContent = texto || "";
  aviso.hidden = !texto;
  aviso.dataset.estado = estadoHilo || "";
  document.body.dataset.estado = estadoHilo || "";
}

function burbuja(rol, texto, { fecha, retenido, id } = {}) {
  const quien = rol === "cliente" ? "Tú" : "Tienda";
  const li = el(
    "li",
    { class: `mensaje ${rol}`, "data-id": id ?? null },
    el("p", { class: "autor" }, quien, fecha ? el("time", { datetime: fecha }, ` · ${hora(fecha)}`) : null),
    el("p", { class: "texto", texto }),
    retenido ? el("p", { class: "etiqueta" }, "Guardado para el encargado") : null,
  );
  return li;
}

function pintar(conversacion) {
  const lista = $("mensajes");
  lista.replaceChildren(
    ...conversacion.mensajes.map((m) => burbuja(m.rol, m.texto, { fecha: m.fecha, retenido: m.retenido, id: m.id })),
  );
  for (const m of conversacion.mensajes) estado.ultimoId = Math.max(estado.ultimoId, m.id);
  mostrarAviso(conversacion.estado);
  alFinal();
}

async function recargar() {
  const conversacion = await api(`/api/conversaciones/${encodeURIComponent(estado.hilo)}`, { token: estado.token });
  pintar(conversacion);
  return conversacion;
}

async function nuevaConversacion() {
  const { thread_id } = await api("/api/conversaciones", { metodo: "POST", token: estado.token });
  estado.hilo = thread_id;
  estado.ultimoId = 0;
  sessionStorage.setItem(claveHilo(), thread_id);
  await recargar();
  abrirEventos();
}

function abrirEventos() {
  if (estado.fuente) estado.fuente.close();
  const ruta =
    `/api/conversaciones/${encodeURIComponent(estado.hilo)}/eventos` +
    `?desde=${estado.ultimoId}&token=${encodeURIComponent(estado.token)}`;
  const fuente = new EventSource(ruta);
  fuente.addEventListener("mensaje", () => {
    mostrarNota(""); // lo nuevo sustituye a cualquier aviso anterior
    // Durante un envío no: al terminar se recarga todo igualmente.
    if (!estado.enviando) recargar().catch((e) => mostrarNota(e.detalle || e.message));
  });
  fuente.addEventListener("error", () => {
    if (fuente.readyState === EventSource.CLOSED) {
      mostrarNota("Se ha perdido la conexión en directo. Recarga la página para ver las respuestas nuevas.");
    }
  });
  estado.fuente = fuente;
}

async function enviar(evento) {
  evento.preventDefault();
  const caja = $("texto");
  const texto = caja.value.trim();
  if (!texto || estado.enviando) return;
  estado.enviando = true;
  $("enviar").disabled = true;
  mostrarNota("");
  const lista = $("mensajes");
  lista.append(burbuja("cliente", texto));
  const respuesta = burbuja("agente", "");
  respuesta.setAttribute("aria-busy", "true");
  respuesta.classList.add("escribiendo");
  const parrafo = respuesta.querySelector(".texto");
  lista.append(respuesta);
  alFinal();
  caja.value = "";
  try {
    const r = await fetch(`/api/conversaciones/${encodeURIComponent(estado.hilo)}/mensajes`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${estado.token}`,
        "Content-Type": "application/json",
        Accept: "text/event-stream",
      },
      body: JSON.stringify({ texto }),
    });
    if (!r.ok) await leerRespuesta(r); // lanza ErrorApi con el detalle
    await leerEventos(r, (tipo, datos) => {
      if (tipo === "token") parrafo.textContent += datos.texto;
      else if (tipo === "descartar") parrafo.textContent = "";
      else if (tipo === "estado") {
        parrafo.textContent = datos.mensajes.map((m) => m.texto).join("\n");
        mostrarAviso(datos.estado);
      } else if (tipo === "error") mostrarNota(datos.detalle);
      alFinal();
    });
  } catch (e) {
    respuesta.remove();
    if (e instanceof ErrorApi && e.estado === 409) mostrarAviso("esperando_aprobacion");
    if (e instanceof ErrorApi && e.estado === 401) return cerrarSesion("Tu sesión ha caducado: vuelve a entrar.");
    mostrarNota(e.detalle || "No se ha podido enviar el mensaje.");
    if (!(e instanceof ErrorApi) || e.estado !== 409) caja.value = texto;
  } finally {
    estado.enviando = false;
    $("enviar").disabled = false;
    respuesta.removeAttribute("aria-busy");
    respuesta.classList.remove("escribiendo");
  }
  // La vista definitiva sale del servidor (con ids y fechas), también lo que llegó entretanto.
  await recargar().catch(() => {});
  caja.focus();
}

function cerrarSesion(motivo) {
  sessionStorage.removeItem(CLAVES.cliente);
  if (motivo) sessionStorage.setItem("agente.motivo", motivo);
  if (estado.fuente) estado.fuente.close();
  location.replace(location.pathname);
}

async function iniciar() {
  estado.token = tokenDeSesion(CLAVES.cliente);
  const datos = estado.token && datosToken(estado.token);
  if (!datos || datos.rol !== "cliente") return pedirToken(CLAVES.cliente, () => { $("chat").hidden = true; });
  estado.cliente = datos.cliente_id;
  $("sesion").textContent = `Cliente ${datos.cliente_id} · tienda ${datos.tienda}`;
  $("chat").hidden = false;
  $("nueva").hidden = false;
  $("salir").hidden = false;
  $("nueva").addEventListener("click", () => nuevaConversacion().catch((e) => mostrarNota(e.detalle)));
  $("salir").addEventListener("click", () => cerrarSesion());
  $("form-mensaje").addEventListener("submit", enviar);
  window.addEventListener("resize", alFinal); // p. ej. al abrir el teclado del móvil
  $("texto").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey) $("form-mensaje").requestSubmit();
  });
  const ejemplo = sessionStorage.getItem(CLAVES.ejemplo);
  if (ejemplo) {
    $("texto").value = ejemplo;
    sessionStorage.removeItem(CLAVES.ejemplo);
  }
  try {
    estado.hilo = sessionStorage.getItem(claveHilo());
    if (estado.hilo) {
      try {
        await recargar();
        abrirEventos();
      } catch (e) {
        if (!(e instanceof ErrorApi) || ![403, 404].includes(e.estado)) throw e;
        estado.hilo = null;
      }
    }
    if (!estado.hilo) await nuevaConversacion();
  } catch (e) {
    if (e instanceof ErrorApi && e.estado === 401) return cerrarSesion("Tu sesión ha caducado.");
    mostrarNota(e.detalle || "No se ha podido abrir la conversación.");
  }
  document.body.dataset.listo = "1";
}

iniciar();
