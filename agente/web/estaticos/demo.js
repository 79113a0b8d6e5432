// Login de demostración: elige un cliente o un encargado y entra con un token de demo.
import { CLAVES, api, el } from "./comun.js";

const $ = (id) => document.getElementById(id);

async function entrar(identidad) {
  try {
    const { token, destino } = await api("/api/demo/login", {
      metodo: "POST",
      cuerpo: { rol: identidad.rol, id: identidad.id },
    });
    sessionStorage.setItem(CLAVES[identidad.rol], token);
    if (identidad.ejemplo) sessionStorage.setItem(CLAVES.ejemplo, identidad.ejemplo);
    location.assign(destino);
  } catch (e) {
    $("nota").textContent = e.detalle || "No se ha podido entrar.";
    $("nota").hidden = false;
  }
}

async function iniciar() {
  let identidades;
  try {
    identidades = await api("/api/demo/identidades");
  } catch (e) {
    $("nota").textContent = e.detalle || "La demo no está disponible.";
    $("nota").hidden = false;
    return;
  }
  for (const identidad of identidades) {
    const boton = el("button", { type: "button", "data-id": identidad.id, onclick: () => entrar(identidad) },
      `${identidad.nombre} (${identidad.id})`);
    const cargo = identidad.cargo && identidad.cargo !== "cliente" ? `${identidad.cargo} · ` : "";
    const item = el("li", { class: "identidad" }, boton,
      el("p", { class: "tienda" }, `${cargo}${identidad.tienda_nombre || identidad.tienda}`),
      identidad.escenario ? el("p", { class: "escenario" }, identidad.escenario) : null,
      identidad.ejemplo ? el("p", { class: "ejemplo" }, `Prueba: «${identidad.ejemplo}»`) : null);
    $(identidad.rol === "cliente" ? "clientes" : "encargados").append(item);
  }
  document.body.dataset.listo = "1";
}

iniciar();
