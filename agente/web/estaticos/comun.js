// Utilidades comunes de las páginas. Todo texto que viene de datos se pone con
// textContent, nunca como HTML: un mensaje con <script> se ve como texto.

export const CLAVES = {
  cliente: "agente.token.cliente",
  encargado: "agente.token.encargado",
  ejemplo: "agente.ejemplo",
};

export class ErrorApi extends Error {
  constructor(estado, detalle) {
    super(detalle);
    this.estado = estado;
    this.detalle = detalle;
  }
}

/** Crea un elemento: el("p", {class: "x"}, "texto", otroNodo). Los textos van como texto. */
export function el(etiqueta, atributos = {}, ...hijos) {
  const nodo = document.createElement(etiqueta);
  for (const [clave, valor] of Object.entries(atributos || {})) {
    if (valor === null || valor === undefined || valor === false) continue;
    if (clave === "class") nodo.className = valor;
    else if (clave === "texto") nodo.textContent = valor;
    else if (clave.startsWith("on") && typeof valor === "function") {
      nodo.addEventListener(clave.slice(2), valor);
    } else nodo.setAttribute(clave, valor === true ? "" : String(valor));
  }
  for (const hijo of hijos.flat()) {
    if (hijo === null || hijo === undefined || hijo === false) continue;
    nodo.append(hijo instanceof Node ? hijo : document.createTextNode(String(hijo)));
  }
  return nodo;
}

/** Llama a la API con el token; lanza ErrorApi con el «detalle» en español. */
export async function api(ruta, { metodo = "GET", cuerpo, token, cabeceras = {} } = {}) {
  const opciones = { method: metodo, headers: { Accept: "application/json", ...cabeceras } };
  if (token) opciones.headers.Authorization = `Bearer ${token}`;
  if (cuerpo !== undefined) {
    opciones.headers["Content-Type"] = "application/json";
    opciones.body = JSON.stringify(cuerpo);
  }
  let respuesta;
  try {
    respuesta = await fetch(ruta, opciones);
  } catch (e) {
    throw new ErrorApi(0, "No hay conexión con el servidor. Inténtalo de nuevo.");
  }
  return leerRespuesta(respuesta);
}

export async function leerRespuesta(respuesta) {
  const tipo = respuesta.headers.get("content-type") || "";
  const datos = tipo.includes("application/json") ? await respuesta.json().catch(() => null) : null;
  if (!respuesta.ok) {
    const detalle = (datos && datos.detalle) || `Error ${respuesta.status}`;
    throw new ErrorApi(respuesta.status, detalle);
  }
  return datos;
}

/** Lee un flujo text/event-stream de una respuesta de fetch y llama a alEvento(tipo, datos). */
export async function leerEventos(respuesta, alEvento) {
  const lector = respuesta.body.getReader();
  const decodificador = new TextDecoder();
  let pendiente = "";
  for (;;) {
    const { value, done } = await lector.read();
    if (done) break;
    pendiente += decodificador.decode(value, { stream: true }).replace(/\r\n?/g, "\n");
    let corte;
    while ((corte = pendiente.indexOf("\n\n")) >= 0) {
      const bloque = pendiente.slice(0, corte);
      pendiente = pendiente.slice(corte + 2);
      let tipo = "message";
      const datos = [];
      for (const linea of bloque.split("\n")) {
        if (linea.startsWith(":")) continue; // comentario (ping)
        const dosPuntos = linea.indexOf(":");
        const campo = dosPuntos < 0 ? linea : linea.slice(0, dosPuntos);
        let valor = dosPuntos < 0 ? "" : linea.slice(dosPuntos + 1);
        if (valor.startsWith(" ")) valor = valor.slice(1);
        if (campo === "event") tipo = valor;
        else if (campo === "data") datos.push(valor);
      }
      if (datos.length) {
        let carga = datos.join("\n");
        try { carga = JSON.parse(carga); } catch (e) { /* texto tal cual */ }
        alEvento(tipo, carga);
      }
    }
  }
}

/**
 * Un flujo SSE (text/event-stream) leído con fetch y el token en la cabecera Authorization:
 * EventSource solo puede mandarlo en la URL, y una URL acaba en los logs de accesos.
 * alEvento(tipo, datos) por cada evento; alCerrar(error) cuando el flujo acaba por su
 * cuenta: error es un ErrorApi (estado 0 si se cortó la red) o null si el servidor lo
 * cerró. close() lo corta sin llamar a alCerrar.
 */
export function abrirFlujo(ruta, token, alEvento, alCerrar) {
  const control = new AbortController();
  (async () => {
    let error = null;
    try {
      const respuesta = await fetch(ruta, {
        headers: { Accept: "text/event-stream", Authorization: `Bearer ${token}` },
        cache: "no-store",
        signal: control.signal,
      });
      if (!respuesta.ok) await leerRespuesta(respuesta); // lanza ErrorApi con el detalle
      await leerEventos(respuesta, alEvento);
    } catch (e) {
      error = e instanceof ErrorApi ? e : new ErrorApi(0, "Se ha perdido la conexión en directo.");
    }
    if (!control.signal.aborted) alCerrar(error);
  })();
  return { close: () => control.abort() };
}

/** Los datos de un token (sin verificar la firma: solo para mostrar quién eres). */
export function datosToken(token) {
  try {
    const parte = token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    const json = decodeURIComponent(
      atob(parte).split("").map((c) => "%" + c.charCodeAt(0).toString(16).padStart(2, "0")).join(""),
    );
    return JSON.parse(json);
  } catch (e) {
    return null;
  }
}

/** Token de la sesión; acepta uno nuevo en el fragmento (#token=...) y lo quita de la URL. */
export function tokenDeSesion(clave) {
  const fragmento = new URLSearchParams(location.hash.slice(1));
  const nuevo = fragmento.get("token");
  if (nuevo) {
    sessionStorage.setItem(clave, nuevo);
    history.replaceState(null, "", location.pathname + location.search);
  }
  const token = sessionStorage.getItem(clave);
  const datos = token && datosToken(token);
  if (datos && datos.exp && datos.exp * 1000 < Date.now()) {
    sessionStorage.removeItem(clave);
    return null;
  }
  return token;
}

const formatoFecha = new Intl.DateTimeFormat("es-ES", { dateStyle: "short", timeStyle: "short" });
const formatoHora = new Intl.DateTimeFormat("es-ES", { hour: "2-digit", minute: "2-digit" });

export function fecha(iso) {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? "" : formatoFecha.format(d);
}

export function hora(iso) {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? "" : formatoHora.format(d);
}

/** "120.00" -> "120,00 EUR" (el dinero llega como texto; no se opera con él). */
export function euros(valor) {
  if (valor === null || valor === undefined || valor === "") return "";
  const texto = String(valor).trim();
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(texto);
  if (!m) return `${texto} EUR`;
  const enteros = m[2].replace(/\B(?=(\d{3})+(?!\d))/g, ".");
  const decimales = ((m[3] || "") + "00").slice(0, 2);
  return `${m[1]}${enteros},${decimales} EUR`;
}

export function duracion(segundos) {
  const s = Math.max(0, Math.floor(segundos));
  if (s < 60) return "menos de 1 min";
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min`;
  const h = Math.floor(min / 60);
  if (h < 48) return `${h} h ${min % 60} min`;
  return `${Math.floor(h / 24)} días`;
}

// Sin sesión válida: en la demo, enlace a sus identidades y formulario para pegar un token.
export function pedirToken(clave, alMostrar = () => {}) {
  document.getElementById("sin-sesion").hidden = false;
  alMostrar();
  const motivo = sessionStorage.getItem("agente.motivo");
  if (motivo) {
    sessionStorage.removeItem("agente.motivo");
    document.getElementById("titulo-sin-sesion").after(el("p", { class: "nota", role: "alert" }, motivo));
  }
  fetch("/api/demo/identidades")
    .then((r) => {
      document.getElementById("enlace-demo").hidden = !r.ok;
      document.getElementById("entrada-token").hidden = !r.ok;
    })
    .catch(() => {});
  document.getElementById("form-token").addEventListener("submit", (e) => {
    e.preventDefault();
    sessionStorage.setItem(clave, document.getElementById("token").value.trim());
    location.reload();
  });
}
