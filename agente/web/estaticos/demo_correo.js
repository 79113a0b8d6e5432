// El buzón de la demo: los correos que recibió su SMTP local, con los enlaces clicables.
import { api, el, fecha } from "./comun.js";

const $ = (id) => document.getElementById(id);
const URL_EN_TEXTO = /(https?:\/\/[^\s<>"]+)/;

// El texto tal cual (sin HTML): cada URL del mismo servidor, un enlace; las demás, texto.
function conEnlaces(texto) {
  const cuerpo = el("pre", { class: "cuerpo-correo" });
  texto.split(URL_EN_TEXTO).forEach((trozo, i) => {
    let propia = false;
    try { propia = i % 2 === 1 && new URL(trozo).origin === location.origin; } catch { /* texto */ }
    cuerpo.append(propia ? el("a", { href: trozo }, trozo) : document.createTextNode(trozo));
  });
  return cuerpo;
}

async function cargar() {
  let correos;
  try {
    correos = await api("/api/demo/correos");
  } catch (e) {
    $("nota").textContent = e.detalle || "El buzón de la demo no está disponible.";
    return;
  }
  $("correos").replaceChildren(...correos.map((c, n) => el("li", { class: "identidad correo", "aria-labelledby": `asunto-${n}` },
    el("h2", { id: `asunto-${n}` }, c.asunto || "(sin asunto)"),
    el("p", { class: "tienda" }, `Para ${c.para} · de ${c.de}${c.fecha ? ` · ${fecha(c.fecha)}` : ""}`),
    conEnlaces(c.texto))));
  $("nota").textContent = correos.length
    ? `${correos.length} correo(s) recibido(s).`
    : "Aún no ha llegado ningún correo. Pide un enlace de entrada en la bandeja o cierra un chat con algo pendiente.";
  document.body.dataset.listo = "1";
}

$("actualizar").addEventListener("click", cargar);
cargar();
