// La historia del protocolo con el SDK oficial de JavaScript (@langchain/langgraph-sdk),
// contra el producto: la conversación del cliente hasta la pausa, quien firma la encuentra
// y la reanuda con una edición, el cliente ve el desenlace y lo no admitido se rechaza.
// Lo lanza tests/api/test_protocolo_langgraph_js.py con AGENTE_URL y los tokens en el
// entorno; imprime un JSON con lo que vio y sale con 1 si algo no cuadra.
import assert from "node:assert/strict";
import { Client } from "@langchain/langgraph-sdk";

const url = process.env.AGENTE_URL;
const cliente = new Client({ apiUrl: url, apiKey: process.env.TOKEN_CLIENTE });
const encargado = new Client({
  apiUrl: url,
  defaultHeaders: { Authorization: `Bearer ${process.env.TOKEN_ENCARGADO}` },
});
const texto = process.env.TEXTO_CLIENTE;
const edicion = JSON.parse(process.env.EDICION);

async function rechazo(llamada) {
  try {
    await llamada();
  } catch (error) {
    return { status: error.status, detail: JSON.parse(error.text).detail };
  }
  throw new Error("se esperaba un rechazo");
}

const vio = {};
const [asistente] = await cliente.assistants.search({ graphId: "agente" });
assert.equal(asistente.graph_id, "agente");
const hilo = await cliente.threads.create();
const eventos = [];
for await (const parte of cliente.runs.stream(hilo.thread_id, "agente", {
  input: { messages: [{ role: "user", content: texto }] },
  streamMode: ["values", "messages-tuple"],
})) {
  eventos.push(parte);
}
vio.eventos = eventos.map((e) => e.event);
assert.equal(eventos[0].event, "metadata");
const valores = eventos.filter((e) => e.event === "values").at(-1).data;
assert.deepEqual(valores.messages.map((m) => m.type), ["human", "ai"]);
assert.equal((await cliente.threads.get(hilo.thread_id)).status, "interrupted");

const pendientes = await encargado.threads.search({ status: "interrupted" });
assert.deepEqual(pendientes.map((h) => h.thread_id), [hilo.thread_id]);
const [interrupcion] = Object.values(pendientes[0].interrupts)[0];
vio.accion = interrupcion.value.action_requests[0].name;

vio.rechazos = {
  reanudar_como_cliente: await rechazo(() => cliente.runs.wait(hilo.thread_id, "agente", {
    command: { resume: { decisions: [{ type: "approve" }] } } })),
  update_state: await rechazo(() => encargado.threads.updateState(hilo.thread_id, {
    values: { messages: [] }, asNode: "tools" })),
  bifurcar: await rechazo(() => encargado.runs.wait(hilo.thread_id, "agente", {
    command: { resume: { decisions: [{ type: "approve" }] } }, checkpointId: "1ef0" })),
};

// El cliente sigue su hilo en vivo desde antes de la firma: ve el desenlace llegar.
const corte = new AbortController();
const enVivo = (async () => {
  for await (const parte of cliente.threads.joinStream(hilo.thread_id, { signal: corte.signal })) {
    const ultimo = parte.event === "values" ? parte.data.messages.at(-1) : null;
    if (ultimo && ultimo.content.includes(process.env.DESENLACE)) {
      corte.abort();
      return ultimo.content;
    }
  }
})().catch((error) => (corte.signal.aborted ? null : Promise.reject(error)));

const final = await encargado.runs.wait(hilo.thread_id, "agente", {
  command: { resume: { [interrupcion.id]: { decisions: [edicion] } } },
});
vio.final_encargado = final.messages.at(-1).content;
vio.en_vivo = await Promise.race([
  enVivo,
  new Promise((_, no) => setTimeout(() => no(new Error("el flujo no vio el desenlace")), 30000).unref()),
]);
const estado = await cliente.threads.getState(hilo.thread_id);
vio.final_cliente = estado.values.messages.at(-1).content;
vio.estado = (await cliente.threads.get(hilo.thread_id)).status;
console.log(JSON.stringify(vio));
