// Chat del cliente: saludo con sus pedidos, sus conversaciones (una pendiente se reabre con su
// historia), respuesta en directo (SSE sobre fetch) con indicador de escritura, estado
// "pendiente de revisión" y lo que llega más tarde (decisión, pagos completados: flujo SSE con fetch).
import { CLAVES, abrirFlujo, api, datosToken, el, ErrorApi, euros, fecha, leerEventos, leerRespuesta, tokenDeSesion, pedirToken } from "./comun.js";

const $ = (id) => document.getElementById(id);
const MAX_TEXTO = 2000;
const AVISOS = {
  esperando_aprobacion:
    "Tu solicitud está pendiente de revisión por un encargado de la tienda. La respuesta aparecerá aquí en cuanto decida.",
  necesita_persona: "Una persona de la tienda continuará esta conversación.",
};
// El estado que lee el cliente (``estado_cliente`` de la API): verdadero, no el interno.
const ESTADOS = { resuelta: "resuelta", esperando_tienda: "esperando a la tienda", abierta: "abierta" };
const ESTADOS_PEDIDO = { pendiente: "pendiente", enviado: "enviado", entregado: "entregado", cancelado: "cancelado" };

const estado = { token: null, cliente: null, nombre: null, tienda: null, espera: null, hilo: null, ultimoId: 0, enviando: false, fuente: null, pedidos: null, soloHilo: null };

function alFinal() {
  const lista = $("mensajes");
  lista.scrollTop = lista.scrollHeight;
}

function claveHilo() {
  return `agente.hilo.${estado.cliente}`;
}

function mostrarNota(texto) {
  $("nota").textContent = texto || "";
  $("nota").hidden = !texto;
}

/** Avisos que no son errores (p. ej. «hemos guardado tu mensaje»): en azul, no en rojo. */
function mostrarInformacion(texto) {
  $("informacion").textContent = texto || "";
  $("informacion").hidden = !texto;
}

function mostrarAviso(estadoHilo) {
  const aviso = $("aviso");
  let texto = AVISOS[estadoHilo];
  // «Normalmente responde en unas 2 h»: de las decisiones recientes de su tienda, si hay bastantes.
  if (texto && estadoHilo === "esperando_aprobacion" && estado.espera) texto += ` Normalmente responde en ${estado.espera}.`;
  aviso.textContent = texto || "";
  aviso.hidden = !texto;
  aviso.dataset.estado = estadoHilo || "";
  document.body.dataset.estado = estadoHilo || "";
}

function burbuja(rol, texto, { fecha: cuando, retenido, id, autor } = {}) {
  // Un mensaje de una persona de la tienda («Escribir al cliente») va firmado con su nombre.
  const tienda = estado.tienda || "Tienda";
  const quien = rol === "cliente" ? "Tú" : rol === "tienda" && autor ? `${autor} · ${tienda}` : tienda;
  return el(
    "li",
    { class: `mensaje ${rol}`, "data-id": id ?? null },
    el("p", { class: "autor" }, quien, cuando ? el("time", { datetime: cuando }, ` · ${fecha(cuando)}`) : null),
    el("p", { class: "texto", texto }),
    retenido ? el("p", { class: "etiqueta" }, "Guardado para el encargado") : null,
  );
}

function saludo() {
  const nombre = (estado.nombre || "").split(" ")[0];
  const pedidos = estado.pedidos || [];
  const botones = pedidos.slice(0, 6).map((p) => el("li", {}, el("button", {
    type: "button", class: "pedido-saludo", "data-pedido": p.id,
    onclick: () => elegirPedido(p),
  }, `Pedido ${p.id}`, el("span", { class: "detalle" },
    `${p.productos || "—"} · ${ESTADOS_PEDIDO[p.estado] || p.estado} · ${euros(p.importe)}`))));
  return el("li", { class: "saludo", id: "saludo" },
    el("p", {}, `Hola${nombre ? `, ${nombre}` : ""}. ¿En qué te ayudamos?`),
    pedidos.length ? el("p", {}, "Elige uno de tus pedidos o escribe tu consulta:") : null,
    pedidos.length ? el("ul", { class: "pedidos-saludo", "aria-label": "Tus pedidos recientes" }, botones) : null);
}

function elegirPedido(pedido) {
  const caja = $("texto");
  caja.value = `Pedido ${pedido.id}: `;
  contar();
  caja.focus();
  caja.setSelectionRange(caja.value.length, caja.value.length);
}

function pintar(conversacion) {
  const lista = $("mensajes");
  const burbujas = conversacion.mensajes.map((m) => burbuja(m.rol, m.texto, { fecha: m.fecha, retenido: m.retenido, id: m.id, autor: m.autor }));
  lista.replaceChildren(...(burbujas.length ? burbujas : [saludo()]));
  for (const m of conversacion.mensajes) estado.ultimoId = Math.max(estado.ultimoId, m.id);
  mostrarAviso(conversacion.estado);
  if (conversacion.estado !== "esperando_aprobacion") mostrarInformacion("");
  alFinal();
}

async function recargar() {
  const conversacion = await api(`/api/conversaciones/${encodeURIComponent(estado.hilo)}`, { token: estado.token });
  pintar(conversacion);
  return conversacion;
}

async function abrir(hilo) {
  estado.hilo = hilo;
  estado.ultimoId = 0;
  sessionStorage.setItem(claveHilo(), hilo);
  mostrarNota("");
  mostrarInformacion("");
  await recargar();
  abrirEventos();
  if (!estado.soloHilo) listarConversaciones().catch(() => {});
}

async function nuevaConversacion() {
  const { thread_id } = await api("/api/conversaciones", { metodo: "POST", token: estado.token });
  await abrir(thread_id);
}

async function listarConversaciones() {
  const lista = await api("/api/conversaciones", { token: estado.token });
  const otras = lista.filter((c) => c.mensajes > 0); // las vacías no son conversaciones
  // Se enseña si hay alguna a la que volver, además de la abierta.
  $("conversaciones").hidden = !otras.some((c) => c.thread_id !== estado.hilo);
  $("lista-conversaciones").replaceChildren(...otras.map((c) => el("li", {}, el("button", {
    type: "button", "aria-current": c.thread_id === estado.hilo ? "true" : null,
    onclick: () => abrir(c.thread_id).catch((e) => mostrarNota(e.detalle)),
  }, el("span", { class: "estado-conv" }, ESTADOS[c.estado_cliente] || c.estado_cliente),
  ` · ${fecha(c.ultimo_en || c.creada)}`, c.tema ? ` · ${c.tema}` : ""))));
  return lista;
}

// El flujo va con el token en la cabecera (fetch), nunca en la URL.
function abrirEventos() {
  if (estado.fuente) estado.fuente.close();
  const ruta = `/api/conversaciones/${encodeURIComponent(estado.hilo)}/eventos?desde=${estado.ultimoId}`;
  let terminado = false;
  estado.fuente = abrirFlujo(ruta, estado.token, (tipo, datos) => {
    if (tipo === "mensaje") {
      mostrarNota(""); // lo nuevo sustituye a cualquier aviso anterior
      // Durante un envío no: al terminar se recarga todo igualmente.
      if (!estado.enviando) recargar().catch((e) => mostrarNota(e.detalle || e.message));
    } else if (tipo === "fin") {
      // El servidor cierra el flujo si ya no tienes acceso (token caducado...): fuera.
      terminado = true;
      cerrarSesion(datos.motivo === "caducado" ? "Tu sesión ha caducado: vuelve a entrar." : datos.detalle);
    }
  }, (error) => {
    if (terminado) return;
    if (error && [401, 403].includes(error.estado)) return cerrarSesion(error.detalle);
    if (error && error.estado) {
      mostrarNota("Se ha perdido la conexión en directo. Recarga la página para ver las respuestas nuevas.");
      return;
    }
    setTimeout(abrirEventos, error ? 3000 : 1000); // corte de red: se reconecta, desde lo último visto
  });
}

function contar() {
  const n = $("texto").value.length;
  const contador = $("contador");
  contador.textContent = n > MAX_TEXTO ? `${n} / ${MAX_TEXTO}: sobran ${n - MAX_TEXTO} caracteres` : `${n} / ${MAX_TEXTO}`;
  contador.classList.toggle("limite", n > MAX_TEXTO);
}

async function enviar(evento) {
  evento.preventDefault();
  const caja = $("texto");
  const texto = caja.value.trim();
  if (!texto || estado.enviando) return;
  if (texto.length > MAX_TEXTO) {
    mostrarNota(`Tu mensaje tiene ${texto.length} caracteres y el máximo es ${MAX_TEXTO}: acórtalo o envíalo en dos partes.`);
    caja.focus();
    return;
  }
  estado.enviando = true;
  $("enviar").disabled = true;
  mostrarNota("");
  mostrarInformacion("");
  const lista = $("mensajes");
  $("saludo")?.remove();
  lista.append(burbuja("cliente", texto));
  const respuesta = burbuja("agente", "");
  respuesta.setAttribute("aria-busy", "true");
  respuesta.classList.add("escribiendo");
  const parrafo = respuesta.querySelector(".texto");
  lista.append(respuesta);
  $("indicador").textContent = "La tienda está escribiendo…";
  alFinal();
  caja.value = "";
  contar();
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
      else if (tipo === "fin") throw new ErrorApi(401, datos.detalle);
      alFinal();
    });
  } catch (e) {
    respuesta.remove();
    if (e instanceof ErrorApi && e.estado === 401) return cerrarSesion("Tu sesión ha caducado: vuelve a entrar.");
    if (e instanceof ErrorApi && e.estado === 409 && /pendiente/.test(e.detalle || "")) {
      // Con una solicitud pendiente el mensaje se guarda: es información, no un error.
      mostrarAviso("esperando_aprobacion");
      mostrarInformacion(e.detalle);
    } else {
      mostrarNota(e.detalle || "No se ha podido enviar el mensaje.");
      caja.value = texto;
      contar();
    }
  } finally {
    estado.enviando = false;
    $("enviar").disabled = false;
    $("indicador").textContent = "";
    respuesta.removeAttribute("aria-busy");
    respuesta.classList.remove("escribiendo");
  }
  // La vista definitiva sale del servidor (con ids y fechas), también lo que llegó entretanto.
  await recargar().catch(() => {});
  if (!estado.soloHilo) listarConversaciones().catch(() => {});
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
  $("sesion").textContent = "";
  $("chat").hidden = false;
  $("salir").hidden = false;
  $("nueva").hidden = false;
  $("nueva").addEventListener("click", () => nuevaConversacion().catch((e) => mostrarNota(e.detalle)));
  $("salir").addEventListener("click", () => cerrarSesion());
  $("form-mensaje").addEventListener("submit", enviar);
  window.addEventListener("resize", alFinal); // p. ej. al abrir el teclado del móvil
  $("texto").addEventListener("input", contar);
  $("texto").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault(); // sin salto de línea suelto en la caja ya vacía
      $("form-mensaje").requestSubmit();
    }
  });
  const ejemplo = sessionStorage.getItem(CLAVES.ejemplo);
  if (ejemplo) {
    $("texto").value = ejemplo;
    sessionStorage.removeItem(CLAVES.ejemplo);
  }
  contar();
  // El enlace de un aviso por correo entra solo en esa conversación (el servidor no deja otra).
  estado.soloHilo = datos.hilo || null;
  $("nueva").hidden = Boolean(estado.soloHilo);
  if (estado.soloHilo) {
    $("sesion").textContent += " · solo esta conversación (enlace del aviso)";
    mostrarInformacion("Has entrado con el enlace del aviso: aquí ves solo esta conversación.");
    try {
      await abrir(estado.soloHilo);
      mostrarInformacion("Has entrado con el enlace del aviso: aquí ves solo esta conversación.");
    } catch (e) {
      if (e instanceof ErrorApi && e.estado === 401) return cerrarSesion("El enlace del aviso ha caducado: entra en el chat de la tienda.");
      mostrarNota(e.detalle || "No se ha podido abrir la conversación.");
    }
    document.body.dataset.listo = "1";
    return;
  }
  try {
    const [pedidos, conversaciones, perfil] = await Promise.all([
      api("/api/pedidos", { token: estado.token }).catch(() => []),
      api("/api/conversaciones", { token: estado.token }).catch(() => []),
      api("/api/yo", { token: estado.token }).catch(() => null),
    ]);
    estado.pedidos = pedidos;
    estado.nombre = perfil?.nombre || datos.nombre || null;
    estado.espera = perfil?.espera_tipica || null;
    estado.tienda = perfil?.tienda.nombre || null;
    // Su nombre y el nombre visible de su tienda, nunca los ids internos.
    $("sesion").textContent = perfil ? `${perfil.nombre} · ${perfil.tienda.nombre}` : "";
    let hilo = sessionStorage.getItem(claveHilo());
    if (hilo && !conversaciones.some((c) => c.thread_id === hilo)) hilo = null;
    // Sin conversación en esta pestaña: se reabre la que espera a un encargado, si la hay.
    hilo = hilo || conversaciones.find((c) => c.estado === "esperando_aprobacion")?.thread_id || null;
    if (hilo) await abrir(hilo);
    else await nuevaConversacion();
  } catch (e) {
    if (e instanceof ErrorApi && e.estado === 401) return cerrarSesion("Tu sesión ha caducado.");
    mostrarNota(e.detalle || "No se ha podido abrir la conversación.");
  }
  document.body.dataset.listo = "1";
}

iniciar();
