// La pestaña «Política» (gerentes y regionales; /api/politica responde 403 a un encargado y la
// pestaña no aparece): los umbrales y la matriz de autoridad de cada tienda con su versión
// vigente (quién y cuándo), su historia, y proponer un cambio (POST /api/politica/{tienda}):
// endurecer se aplica al momento; ampliar queda como solicitud que firma alguien por encima
// (la ve en su bandeja, «Cambios de política por firmar»).
import { api, el, ErrorApi, euros, fecha } from "./comun.js";

const ROLES = { encargado: "Encargado", gerente: "Gerente", regional: "Regional" };

// «700», «700,5», «1.234,50» o «1234.50» -> «1234.50» (la API quiere punto decimal).
function importe(texto) {
  const limpio = texto.replace(/\s|EUR|€/gi, "");
  return limpio.includes(",") ? limpio.replace(/\./g, "").replace(",", ".") : limpio;
}

function quienCuando(v) {
  if (!v) return "los valores por defecto";
  const firma = v.firmada_por_nombre ? `, firmada por ${v.firmada_por_nombre}` : "";
  return `${v.creada_por_nombre || "el sistema"} el ${fecha(v.creada)}${firma}`;
}

function tablaUmbrales(p, valores) {
  const ultima = p.historial[p.historial.length - 1];
  return el("section", { class: "bloque-politica", "aria-labelledby": "titulo-umbrales" },
    el("h3", { id: "titulo-umbrales" }, `Umbrales · versión ${p.version}`),
    el("p", { class: "version-vigente" }, `Vigente desde: ${quienCuando(ultima)}.`),
    el("div", { class: "tabla-desplazable", tabindex: 0, role: "region", "aria-label": "Umbrales de la tienda" },
      el("table", { class: "tabla" },
        el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Valor"), el("th", { scope: "col" }, "Ahora"))),
        el("tbody", {}, valores.filter((v) => v.clave in p.umbrales).map((v) => el("tr", {},
          el("th", { scope: "row" }, v.descripcion),
          el("td", {}, v.tipo === "dinero" ? euros(p.umbrales[v.clave]) : String(p.umbrales[v.clave]))))))));
}

function tablaMatriz(p, reglas) {
  const m = p.matriz;
  const limite = (v) => (v === null ? "sin límite" : euros(v));
  return el("section", { class: "bloque-politica", "aria-labelledby": "titulo-matriz" },
    el("h3", { id: "titulo-matriz" }, `Matriz de autoridad · versión ${m.version}${m.propia ? "" : " (la de por defecto)"}`),
    el("p", { class: "version-vigente" }, m.creada
      ? `Vigente desde: ${quienCuando(m)}.` : "La de por defecto para toda tienda."),
    el("div", { class: "tabla-desplazable", tabindex: 0, role: "region", "aria-label": "Matriz de autoridad" },
      el("table", { class: "tabla" },
        el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Operación"),
          m.roles.map((r) => el("th", { scope: "col" }, `${ROLES[r] || r} firma hasta`)),
          el("th", { scope: "col" }, "Dos firmas por encima de"))),
        el("tbody", {}, Object.entries(m.reglas).map(([regla, r]) => el("tr", {},
          el("th", { scope: "row" }, reglas[regla] || regla),
          m.roles.map((rol) => el("td", {}, rol in r.limites ? limite(r.limites[rol]) : "no firma")),
          el("td", {}, r.dos_firmas_por_encima === null ? "nunca" : euros(r.dos_firmas_por_encima))))))));
}

function historia(p) {
  const fila = (v) => el("li", {}, `Versión ${v.version}: ${quienCuando(v)}`, v.motivo ? ` · «${v.motivo}»` : "");
  return el("details", { class: "historia-politica" }, el("summary", {}, "Versiones anteriores"),
    el("p", { class: "subtitulo" }, "Umbrales"), el("ul", {}, [...p.historial].reverse().map(fila)),
    el("p", { class: "subtitulo" }, "Matriz de autoridad"),
    p.historial_matriz.length ? el("ul", {}, [...p.historial_matriz].reverse().map(fila)) : el("p", {}, "Solo la de por defecto."));
}

/** El formulario de un cambio: qué valor, el nuevo y el motivo. */
function formCambio(p, gestion, { token, tienda, alCambiar }) {
  const opciones = [
    el("optgroup", { label: "Umbrales de la tienda" }, gestion.valores.filter((v) => v.clave in p.umbrales)
      .map((v) => el("option", { value: `u:${v.clave}` }, v.descripcion))),
    el("optgroup", { label: "Matriz de autoridad" }, Object.entries(p.matriz.reglas).flatMap(([regla, r]) => [
      ...p.matriz.roles.filter((rol) => rol in r.limites).map((rol) => el("option", { value: `l:${regla}:${rol}` },
        `Límite de ${rol} en ${gestion.reglas[regla] || regla}`)),
      el("option", { value: `d:${regla}` }, `Dos firmas en ${gestion.reglas[regla] || regla} por encima de`)])),
  ];
  const que = el("select", { id: "politica-que", required: true }, opciones);
  const valor = el("input", { id: "politica-valor", autocomplete: "off", inputmode: "decimal", required: true });
  const pista = el("p", { id: "pista-valor", class: "pista" });
  const motivo = el("textarea", { id: "politica-motivo", rows: 2, maxlength: 500 });
  const resultado = el("div", { class: "resultado-politica", role: "status", "aria-live": "polite" });
  const describir = () => {
    const [tipo, clave] = que.value.split(":");
    const v = gestion.valores.find((x) => x.clave === clave);
    pista.textContent = tipo === "u" ? `Dominio: ${v?.rango || ""}.` : "En EUR; vacío = sin límite (o nunca).";
    valor.required = tipo === "u";
  };
  que.addEventListener("change", describir);
  describir();
  const form = el("form", { class: "form-politica", "aria-labelledby": "titulo-proponer" },
    el("h3", { id: "titulo-proponer" }, "Proponer un cambio"),
    el("p", {}, "Endurecer se aplica al momento. Ampliar (más dinero o menos firmas) queda como solicitud que firma alguien por encima de ti."),
    el("p", { class: "campo" }, el("label", { for: "politica-que" }, "Qué cambiar"), que),
    el("p", { class: "campo" }, el("label", { for: "politica-valor" }, "Nuevo valor"), valor, pista),
    el("p", { class: "campo" }, el("label", { for: "politica-motivo" }, "Motivo (lo lee quien firma)"), motivo),
    el("div", { class: "acciones-form" }, el("button", { type: "submit" }, "Proponer el cambio")),
    resultado);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const [tipo, regla, rol] = que.value.split(":");
    const texto = valor.value.trim();
    const dato = gestion.valores.find((x) => x.clave === regla);
    const cuerpo = motivo.value.trim() ? { motivo: motivo.value.trim() } : {};
    if (tipo === "u") cuerpo.umbrales = { [regla]: dato?.tipo === "dinero" ? importe(texto) : Number(texto) };
    else if (tipo === "l") cuerpo.limites = { [regla]: { [rol]: texto ? importe(texto) : null } };
    else cuerpo.dos_firmas = { [regla]: texto ? importe(texto) : null };
    resultado.replaceChildren(el("p", {}, "Enviando…"));
    try {
      const r = await api(`/api/politica/${encodeURIComponent(tienda)}`, { metodo: "POST", token: token(), cuerpo });
      if (r && r.diferencias) {
        resultado.replaceChildren(el("p", { class: "solicitud-creada" },
          `Queda como solicitud ${r.id}: la firma ${r.firman}. Hasta entonces no cambia nada.`),
        el("ul", {}, r.diferencias.map((d) => el("li", {}, d.texto))));
      } else {
        await alCambiar();
        return;
      }
    } catch (e) {
      resultado.replaceChildren(el("p", { class: "fallida" }, (e instanceof ErrorApi && e.detalle) || "No se ha podido."));
    }
  });
  return form;
}

/** Monta la pestaña si quien entra administra alguna tienda; devuelve lo que hacer al abrirla. */
export function iniciarPaginaPolitica({ token }) {
  const panel = document.getElementById("politica");
  let gestion = null;
  const contenido = el("div", { id: "contenido-politica" });
  const selector = el("select", { id: "politica-tienda" });

  async function cargar(aviso) {
    const tienda = selector.value;
    try {
      const p = await api(`/api/politica/${encodeURIComponent(tienda)}`, { token: token() });
      // replaceChildren escribiría «null» como texto: el aviso, solo si lo hay.
      contenido.replaceChildren(
        ...(aviso ? [el("p", { class: "aplicada", role: "status" }, aviso)] : []),
        tablaUmbrales(p, gestion.valores), tablaMatriz(p, gestion.reglas), historia(p),
        formCambio(p, gestion, { token, tienda, alCambiar: () => cargar("Aplicado: ya es la versión vigente.") }));
    } catch (e) {
      contenido.replaceChildren(el("p", { class: "nota" }, e.detalle || "No se ha podido leer la política."));
    }
  }

  (async () => {
    try {
      gestion = await api("/api/politica", { token: token() });
    } catch (e) {
      return; // un encargado no administra la política: la pestaña sigue oculta
    }
    selector.replaceChildren(...gestion.tiendas.map((t) => el("option", { value: t.id }, t.nombre)));
    selector.addEventListener("change", () => cargar());
    panel.replaceChildren(el("h2", {}, "Política de la tienda"),
      el("p", { class: "campo", hidden: gestion.tiendas.length < 2 },
        el("label", { for: "politica-tienda" }, "Tienda"), selector),
      contenido);
    document.getElementById("tab-politica").hidden = false;
  })();
  return () => (gestion ? cargar() : null);
}
