// Baja de los avisos por correo: el token llega en el fragmento (#baja=...), que el
// navegador no envía al servidor; se manda en el cuerpo solo al pulsar el botón.
import { api, ErrorApi } from "./comun.js";

const $ = (id) => document.getElementById(id);
const token = new URLSearchParams(location.hash.slice(1)).get("baja");
history.replaceState(null, "", location.pathname);

if (!token) {
  $("resultado").textContent = "Este enlace no es válido: ábrelo tal cual desde el correo.";
} else {
  $("baja").hidden = false;
  $("baja").addEventListener("click", async () => {
    $("baja").disabled = true;
    try {
      const r = await api("/api/avisos-cliente/baja", { metodo: "POST", cuerpo: { token } });
      $("resultado").textContent = r.detalle;
      $("baja").hidden = true;
    } catch (e) {
      $("resultado").textContent = e instanceof ErrorApi ? e.detalle : "No se ha podido completar la baja.";
      $("baja").disabled = false;
    }
  });
}
document.body.dataset.listo = "1";
