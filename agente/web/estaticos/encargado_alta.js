// La pestaña «Alta» (regionales y administradores; docs/empezar-tienda.md): las tiendas, las
// regiones y las personas que gestiona quien ha entrado, darlas de alta y de baja. Las reglas
// (nadie da un rol más alto que el suyo, un regional solo en su región...) las aplica el
// servidor: aquí se enseña su motivo tal cual.
import { api, el } from "./comun.js";

const ROLES = { encargado: "Encargado", gerente: "Gerente", regional: "Regional" };
const campo = (id, texto, control) => el("p", { class: "campo" }, el("label", { for: id }, texto), control);
const entrada = (id, extra = {}) => el("input", { id, autocomplete: "off", ...extra });
const opciones = (lista, vacia) => [...(vacia ? [el("option", { value: "" }, vacia)] : []),
  ...lista.map((x) => el("option", { value: x.id }, `${x.nombre} (${x.id})`))];
const sinVacios = (datos) => Object.fromEntries(Object.entries(datos).filter(([, v]) => v !== ""));

function tabla(titulo, columnas, filas) {
  return el("div", { class: "tabla-desplazable", tabindex: 0, role: "region", "aria-label": titulo },
    el("table", { class: "tabla" }, el("caption", {}, titulo),
      el("thead", {}, el("tr", {}, columnas.map((c) => el("th", { scope: "col" }, c)))),
      el("tbody", {}, filas.map((f) => el("tr", {}, f.map((c) => el("td", {}, c)))))));
}

export function iniciarPaginaAlta({ token, perfil }) {
  const panel = document.getElementById("alta");
  const aviso = el("p", { id: "aviso-alta", role: "status", "aria-live": "polite" });
  const datos = { tiendas: [], regiones: [], personas: [] };

  async function hacer(metodo, ruta, cuerpo, hecho) {
    try {
      await api(ruta, { metodo, cuerpo, token: token() });
      await cargar();
      aviso.className = "aplicada";
      aviso.textContent = hecho;
      return true;
    } catch (e) {
      aviso.className = "error";
      aviso.textContent = e.detalle || "No se ha podido guardar.";
      return false;
    }
  }

  const baja = (ruta, nombre) => el("button", { type: "button", class: "secundario",
    onclick: () => hacer("POST", `${ruta}/desactivar`, undefined, `${nombre}: desactivada.`) }, `Desactivar ${nombre}`);

  function formulario(id, titulo, campos, enviar) {
    const form = el("form", { id, "aria-labelledby": `titulo-${id}` }, el("h3", { id: `titulo-${id}` }, titulo),
      ...campos, el("div", { class: "acciones-form" }, el("button", { type: "submit" }, titulo)));
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      if (await enviar()) form.reset();
    });
    return form;
  }

  function formTienda() {
    const [id, nombre, region, zona, calle, cp, localidad] = ["t-id", "t-nombre", "t-region", "t-zona", "t-calle",
      "t-cp", "t-localidad"].map((i) => (i === "t-region" ? el("select", { id: i }, opciones(datos.regiones, "Sin región"))
      : entrada(i, i === "t-id" || i === "t-nombre" ? { required: true } : {})));
    zona.value = "Europe/Madrid";
    return formulario("nueva-tienda", "Dar de alta la tienda", [campo("t-id", "Id (p. ej. mi-tienda)", id),
      campo("t-nombre", "Nombre", nombre), campo("t-region", "Región", region), campo("t-zona", "Zona horaria", zona),
      campo("t-calle", "Calle y número", calle), campo("t-cp", "Código postal", cp), campo("t-localidad", "Localidad", localidad)],
    () => hacer("POST", "/api/tiendas", sinVacios({ id: id.value, nombre: nombre.value, region: region.value,
      zona_horaria: zona.value, calle: calle.value, codigo_postal: cp.value, localidad: localidad.value }),
    `Tienda ${nombre.value} dada de alta.`));
  }

  function formPersona() {
    const id = entrada("p-id", { required: true });
    const nombre = entrada("p-nombre", { required: true });
    const email = entrada("p-email", { type: "email", required: true });
    const rol = el("select", { id: "p-rol" }, Object.entries(ROLES).map(([v, t]) => el("option", { value: v }, t)));
    const tienda = el("select", { id: "p-tienda" }, opciones(datos.tiendas.filter((t) => t.activa), "Ninguna"));
    const region = el("select", { id: "p-region" }, opciones(datos.regiones, "Ninguna"));
    return formulario("nueva-persona", "Dar de alta a la persona", [campo("p-id", "Id (p. ej. enc-mi-tienda)", id),
      campo("p-nombre", "Nombre y apellidos", nombre), campo("p-email", "Correo (con él entra)", email),
      campo("p-rol", "Rol", rol), campo("p-tienda", "Tienda (encargado y gerente)", tienda),
      campo("p-region", "Región (regional)", region)],
    () => hacer("POST", "/api/personas", sinVacios({ id: id.value, nombre: nombre.value, email: email.value,
      rol: rol.value, tienda: tienda.value, region: region.value }), `${nombre.value} dada de alta: ya puede entrar con su correo.`));
  }

  function formRegion() {
    const id = entrada("r-id", { required: true });
    const nombre = entrada("r-nombre", { required: true });
    return formulario("nueva-region", "Dar de alta la región", [campo("r-id", "Id (p. ej. centro)", id),
      campo("r-nombre", "Nombre", nombre)],
    () => hacer("POST", "/api/regiones", { id: id.value, nombre: nombre.value }, `Región ${nombre.value} dada de alta.`));
  }

  function pintar() {
    const t = datos.tiendas.map((x) => [x.nombre, x.id, x.region || "", x.zona_horaria, x.provincia || "",
      x.activa ? baja(`/api/tiendas/${x.id}`, x.nombre) : "Desactivada"]);
    const p = datos.personas.map((x) => [x.nombre, x.email || "", x.administrador ? "Administrador" : ROLES[x.rol] || x.rol,
      x.tienda || x.region || "", x.activo ? (x.id === perfil.id ? "Tú" : baja(`/api/personas/${x.id}`, x.nombre)) : "De baja"]);
    panel.replaceChildren(el("h2", {}, "Alta de tiendas y personas"), aviso,
      tabla("Tiendas", ["Nombre", "Id", "Región", "Zona horaria", "Provincia", ""], t),
      tabla("Personas", ["Nombre", "Correo", "Rol", "Tienda o región", ""], p),
      formPersona(), formTienda(), ...(perfil.administrador ? [formRegion()] : []));
  }

  async function cargar() {
    [datos.tiendas, datos.regiones, datos.personas] = await Promise.all(
      ["/api/tiendas", "/api/regiones", "/api/personas"].map((r) => api(r, { token: token() })));
    pintar();
  }

  if (perfil.administrador || perfil.rol === "regional") document.getElementById("tab-alta").hidden = false;
  return () => cargar().catch((e) => panel.replaceChildren(el("p", { class: "nota" }, e.detalle || "No se ha podido leer el alta.")));
}
