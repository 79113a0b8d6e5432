// El enlace del correo: el token llega en el fragmento (el navegador no lo envía al pedir
// la página, así que no queda en ningún log) y se canjea con un POST al pulsar «Entrar»:
// un programa que abra el enlace para revisarlo no lo gasta.
import { CLAVES, api } from "./comun.js";

const $ = (id) => document.getElementById(id);
const fragmento = new URLSearchParams(location.hash.slice(1));
const correo = fragmento.get("correo");
const token = fragmento.get("t");
history.replaceState(null, "", location.pathname);

if (!correo || !token) {
  $("estado-enlace").textContent = "Este enlace está incompleto. Pide uno nuevo desde la página de entrada.";
} else {
  $("para").textContent = `Enlace para ${correo}.`;
  $("entrar").hidden = false;
  $("entrar").addEventListener("click", async () => {
    $("entrar").disabled = true;
    try {
      const r = await api("/api/entrada/correo/canjear", { metodo: "POST", cuerpo: { email: correo, token } });
      sessionStorage.setItem(CLAVES.encargado, r.token);
      location.replace(r.destino);
    } catch (e) {
      $("estado-enlace").textContent = e.detalle || "No se ha podido entrar.";
    }
  });
}
