// Documentación local de la API (sin CDN): lee /openapi.json y lo muestra.
import { el } from "./comun.js";

const $ = (id) => document.getElementById(id);

function esquema(spec, s) {
  if (!s) return "";
  if (s.$ref) return s.$ref.split("/").pop();
  if (s.type === "array") return `lista de ${esquema(spec, s.items)}`;
  if (s.anyOf) return s.anyOf.map((x) => esquema(spec, x)).join(" | ");
  return s.type || "";
}

function pintar(spec) {
  const rutas = $("rutas");
  for (const [ruta, metodos] of Object.entries(spec.paths)) {
    for (const [metodo, op] of Object.entries(metodos)) {
      const cuerpo = op.requestBody?.content?.["application/json"]?.schema;
      const respuestas = Object.entries(op.responses || {}).map(([codigo, r]) =>
        el("li", {}, el("code", {}, codigo), ` ${r.description || ""}`));
      rutas.append(el("details", { class: "operacion" },
        el("summary", {}, el("code", { class: `metodo ${metodo}` }, metodo.toUpperCase()), " ", el("code", {}, ruta),
          op.summary ? ` — ${op.summary}` : ""),
        op.description ? el("p", { class: "descripcion" }, op.description) : null,
        (op.parameters || []).length
          ? el("p", {}, "Parámetros: ", (op.parameters || []).map((p) => `${p.name} (${p.in})`).join(", "))
          : null,
        cuerpo ? el("p", {}, "Cuerpo: ", el("code", {}, esquema(spec, cuerpo))) : null,
        el("ul", {}, respuestas)));
    }
  }
  const modelos = spec.components?.schemas || {};
  rutas.append(el("h2", {}, "Esquemas"));
  for (const [nombre, s] of Object.entries(modelos)) {
    rutas.append(el("details", { class: "operacion" }, el("summary", {}, el("code", {}, nombre)),
      el("pre", {}, JSON.stringify(s, null, 2))));
  }
}

$("probar").addEventListener("submit", async (e) => {
  e.preventDefault();
  const opciones = { method: $("p-metodo").value, headers: { Accept: "application/json" } };
  const token = $("p-token").value.trim();
  if (token) opciones.headers.Authorization = `Bearer ${token}`;
  if (opciones.method === "POST" && $("p-cuerpo").value.trim()) {
    opciones.headers["Content-Type"] = "application/json";
    opciones.body = $("p-cuerpo").value;
  }
  try {
    const r = await fetch($("p-ruta").value, opciones);
    $("p-resultado").textContent = `${r.status}\n${await r.text()}`;
  } catch (err) {
    $("p-resultado").textContent = String(err);
  }
});

fetch("/openapi.json").then((r) => r.json()).then(pintar);
