"""Proveedor compatible con OpenAI, con la latencia de un LLM de verdad (pruebas y bench).

Lo usan las pruebas y ``bench/`` (que lo importa de aquí: bench depende de
``tests/apoyo``, nunca al revés). A diferencia de ``tests/apoyo/servidor_openai.py`` (respuestas guionizadas petición a petición),
este *se comporta* como un LLM en los escenarios del producto: convierte los mensajes
OpenAI de la petición en mensajes de LangChain y pide el siguiente paso al modelo de
reglas del producto (:func:`agente.modelo_offline.decidir`, con los nombres de las
herramientas que trae la petición); responde como OpenAI (``tool_calls`` o texto) y, con
``"stream": true``, emite los tokens uno a uno. Antes del primer token espera
``primer_token`` segundos y después ``1 / tokens_por_segundo`` por token (por defecto
1,2 s y 40 tokens/s, lo habitual en un modelo pequeño alojado). Sin streaming responde
de golpe tras el tiempo de generación entero, como el proveedor real.

Servidor HTTP/1.1 mínimo sobre ``asyncio`` (keep-alive, cuerpo por ``Content-Length``,
respuestas en streaming con ``Transfer-Encoding: chunked``): cientos de flujos a la vez
en un solo hilo y sin gastar CPU mientras «piensa». Se conduce con el cliente real
``langchain-openai`` (``AGENTE_MODELO=openai:<nombre>`` y
``AGENTE_MODELO_BASE_URL=http://127.0.0.1:PUERTO/v1``).

Tiempo de modelo por turno: si el último mensaje del cliente lleva una marca
``[ref XXX]``, cada petición queda anotada con esa marca, su inicio (``time.time()``) y su
duración (desde que tiene el cuerpo hasta el último byte). ``GET /estadisticas`` las
devuelve; el bench resta a cada turno el tiempo de modelo de su marca.

Uso: ``python -m tests.apoyo.proveedor_latencia [--puerto 0] [--primer-token 1.2]
[--tokens-por-segundo 40]``; escribe ``PROVEEDOR_URL=http://127.0.0.1:PUERTO/v1`` en la
salida estándar al estar listo. Desde Python: :class:`ProveedorEnProceso` (otro proceso,
para no robar el GIL a quien se mide).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

RUTA_CHAT = "/v1/chat/completions"
RUTA_ESTADISTICAS = "/estadisticas"
RUTA_REINICIAR = "/reiniciar"
RUTA_LATENCIA = "/latencia"  # POST {"primer_token": s, "tokens_por_segundo": n}: cambia la latencia en marcha
MARCA = re.compile(r"\[ref ([\w-]+)\]")
# Un token ~ 4 caracteres (la regla de OpenAI para textos occidentales), con su espacio delante.
_TOKEN = re.compile(r"\s*\S{1,4}|\s+")
MAX_CUERPO = 8 * 2**20


@dataclass(frozen=True)
class Latencia:
    """Cuánto tarda el «modelo»: hasta el primer token y por cada token siguiente."""

    primer_token: float = 1.2
    tokens_por_segundo: float = 40.0

    def __post_init__(self) -> None:
        if self.primer_token < 0 or self.tokens_por_segundo <= 0:
            raise ValueError("primer_token >= 0 y tokens_por_segundo > 0")

    @property
    def por_token(self) -> float:
        return 1.0 / self.tokens_por_segundo

    def generacion(self, tokens: int) -> float:
        """Segundos de una respuesta entera de ``tokens`` tokens (sin streaming)."""
        return self.primer_token + max(tokens - 1, 0) * self.por_token


def trozos(texto: str) -> list[str]:
    """El texto en tokens aproximados; concatenados dan el texto exacto."""
    return _TOKEN.findall(texto) if texto else []


@dataclass
class Registro:
    """Peticiones atendidas: ``(marca, inicio, duracion_s)``; la marca puede ser ``None``."""

    peticiones: list[tuple[str | None, float, float]] = field(default_factory=list)
    errores: int = 0

    def como_json(self) -> dict[str, Any]:
        return {"peticiones": self.peticiones, "errores": self.errores}


# --- El «modelo» ---------------------------------------------------------------------------


def _marca(mensajes: list[dict[str, Any]]) -> str | None:
    for mensaje in reversed(mensajes):
        if mensaje.get("role") == "user":
            contenido = mensaje.get("content")
            if isinstance(contenido, list):  # partes de contenido de OpenAI
                contenido = " ".join(p.get("text", "") for p in contenido if isinstance(p, dict))
            encontrada = MARCA.search(contenido or "")
            return encontrada.group(1) if encontrada else None
    return None


def siguiente_paso(cuerpo: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """Texto y llamadas (formato OpenAI) que respondería el modelo a esta petición."""
    from langchain_core.messages import convert_to_messages

    from agente.modelo_offline import decidir

    nombres = {
        h["function"]["name"] for h in cuerpo.get("tools") or [] if h.get("type") == "function"
    }
    mensaje = decidir(convert_to_messages(cuerpo.get("messages") or []), nombres or None)
    llamadas = [
        {
            "id": f"call_{uuid.uuid4().hex[:24]}",
            "type": "function",
            "function": {"name": t["name"], "arguments": json.dumps(t["args"], ensure_ascii=False)},
        }
        for t in mensaje.tool_calls
    ]
    return ("" if llamadas else str(mensaje.content)), llamadas


def _tokens_de(texto: str, llamadas: list[dict[str, Any]]) -> int:
    n = len(trozos(texto))
    for llamada in llamadas:
        n += 1 + len(trozos(llamada["function"]["arguments"]))  # el nombre cuenta como un token
    return max(n, 1)


# --- HTTP ----------------------------------------------------------------------------------


class _Peticion:
    def __init__(self, metodo: str, ruta: str, cabeceras: dict[str, str], cuerpo: bytes) -> None:
        self.metodo, self.ruta, self.cabeceras, self.cuerpo = metodo, ruta, cabeceras, cuerpo

    @property
    def mantener(self) -> bool:
        return self.cabeceras.get("connection", "").lower() != "close"


async def _leer_peticion(lector: asyncio.StreamReader) -> _Peticion | None:
    try:
        cabecera = await lector.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    lineas = cabecera.decode("latin-1").split("\r\n")
    metodo, ruta, _ = lineas[0].split(" ", 2)
    cabeceras = {}
    for linea in lineas[1:]:
        if ":" in linea:
            clave, valor = linea.split(":", 1)
            cabeceras[clave.strip().lower()] = valor.strip()
    longitud = int(cabeceras.get("content-length") or 0)
    if longitud > MAX_CUERPO:
        return None
    cuerpo = await lector.readexactly(longitud) if longitud else b""
    return _Peticion(metodo, ruta.split("?", 1)[0], cabeceras, cuerpo)


def _cabeceras(estado: int, tipo: str, extra: list[str]) -> bytes:
    textos = {200: "OK", 400: "Bad Request", 404: "Not Found", 500: "Internal Server Error"}
    lineas = [f"HTTP/1.1 {estado} {textos.get(estado, 'OK')}", f"Content-Type: {tipo}", *extra]
    return ("\r\n".join(lineas) + "\r\n\r\n").encode("latin-1")


def _json(estado: int, datos: Any) -> bytes:
    crudo = json.dumps(datos, ensure_ascii=False).encode()
    return _cabeceras(estado, "application/json", [f"Content-Length: {len(crudo)}"]) + crudo


class Proveedor:
    """El servidor. ``arrancar`` abre el socket; ``url`` es la base para ``langchain-openai``."""

    def __init__(self, *, latencia: Latencia | None = None, puerto: int = 0) -> None:
        self.latencia = latencia or Latencia()
        self.puerto = puerto
        self.registro = Registro()
        self.en_curso = 0  # peticiones de chat que el «modelo» está pensando ahora
        self._servidor: asyncio.Server | None = None
        self._n = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.puerto}/v1"

    async def arrancar(self) -> None:
        self._servidor = await asyncio.start_server(
            self._conexion, "127.0.0.1", self.puerto, backlog=1024, limit=MAX_CUERPO
        )
        self.puerto = self._servidor.sockets[0].getsockname()[1]

    async def servir(self) -> None:
        async with self._servidor:
            await self._servidor.serve_forever()

    async def _conexion(self, lector: asyncio.StreamReader, escritor: asyncio.StreamWriter) -> None:
        try:
            while (peticion := await _leer_peticion(lector)) is not None:
                await self._atender(peticion, escritor)
                if not peticion.mantener:
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass  # el cliente se fue, o el servidor se para
        finally:
            escritor.close()

    async def _atender(self, peticion: _Peticion, escritor: asyncio.StreamWriter) -> None:
        if peticion.metodo == "GET" and peticion.ruta == RUTA_ESTADISTICAS:
            escritor.write(_json(200, self.registro.como_json()))
        elif peticion.metodo == "POST" and peticion.ruta == RUTA_REINICIAR:
            self.registro = Registro()
            escritor.write(_json(200, {"ok": True}))
        elif peticion.metodo == "POST" and peticion.ruta == RUTA_LATENCIA:
            self.latencia = Latencia(**json.loads(peticion.cuerpo or b"{}"))
            escritor.write(_json(200, {"ok": True}))
        elif peticion.metodo == "POST" and peticion.ruta.rstrip("/") == RUTA_CHAT:
            self.en_curso += 1
            try:
                await self._completar(peticion, escritor)
            finally:
                self.en_curso -= 1
        else:
            escritor.write(_json(404, {"error": {"message": f"ruta desconocida: {peticion.ruta}"}}))
        await escritor.drain()

    async def _completar(self, peticion: _Peticion, escritor: asyncio.StreamWriter) -> None:
        inicio_reloj, inicio = time.time(), time.perf_counter()
        try:
            cuerpo = json.loads(peticion.cuerpo or b"{}")
            texto, llamadas = siguiente_paso(cuerpo)
        except Exception as exc:  # petición que un proveedor real también rechazaría
            self.registro.errores += 1
            escritor.write(_json(400, {"error": {"message": f"{type(exc).__name__}: {exc}",
                                                 "type": "invalid_request_error"}}))
            return
        self._n += 1
        comun = {"id": f"chatcmpl-{self._n}", "created": int(inicio_reloj),
                 "model": cuerpo.get("model") or "latencia"}
        uso = {"prompt_tokens": 200, "completion_tokens": _tokens_de(texto, llamadas)}
        uso["total_tokens"] = uso["prompt_tokens"] + uso["completion_tokens"]
        if cuerpo.get("stream"):
            await self._flujo(escritor, comun, texto, llamadas, uso,
                              (cuerpo.get("stream_options") or {}).get("include_usage"))
        else:
            await asyncio.sleep(self.latencia.generacion(uso["completion_tokens"]))
            mensaje: dict[str, Any] = {"role": "assistant", "content": texto or None}
            if llamadas:
                mensaje["tool_calls"] = llamadas
            escritor.write(_json(200, {
                **comun, "object": "chat.completion", "usage": uso,
                "choices": [{"index": 0, "message": mensaje,
                             "finish_reason": "tool_calls" if llamadas else "stop"}],
            }))
            await escritor.drain()
        self.registro.peticiones.append(
            (_marca(cuerpo.get("messages") or []), inicio_reloj, time.perf_counter() - inicio)
        )

    async def _flujo(self, escritor, comun, texto, llamadas, uso, con_uso) -> None:
        escritor.write(_cabeceras(200, "text/event-stream", ["Cache-Control: no-cache",
                                                             "Transfer-Encoding: chunked"]))
        base = {**comun, "object": "chat.completion.chunk"}

        def evento(delta: dict[str, Any] | None, fin: str | None = None, **extra: Any) -> None:
            datos = {**base, "choices": [] if delta is None else
                     [{"index": 0, "delta": delta, "finish_reason": fin}], **extra}
            _trozo(escritor, f"data: {json.dumps(datos, ensure_ascii=False)}\n\n".encode())

        deltas: list[dict[str, Any]] = [{"content": t} for t in trozos(texto)]
        for i, llamada in enumerate(llamadas):
            deltas.append({"tool_calls": [{"index": i, "id": llamada["id"], "type": "function",
                                           "function": {"name": llamada["function"]["name"],
                                                        "arguments": ""}}]})
            deltas += [{"tool_calls": [{"index": i, "function": {"arguments": t}}]}
                       for t in trozos(llamada["function"]["arguments"])]
        await asyncio.sleep(self.latencia.primer_token)
        evento({"role": "assistant", "content": ""})
        for n, delta in enumerate(deltas):
            if n:
                await asyncio.sleep(self.latencia.por_token)
            evento(delta)
            await escritor.drain()
        evento({}, "tool_calls" if llamadas else "stop")
        if con_uso:
            evento(None, usage=uso)
        _trozo(escritor, b"data: [DONE]\n\n")
        _trozo(escritor, b"")  # fin del cuerpo chunked
        await escritor.drain()


def _trozo(escritor: asyncio.StreamWriter, datos: bytes) -> None:
    escritor.write(f"{len(datos):x}\r\n".encode() + datos + b"\r\n")


# --- En un hilo (pruebas) o en otro proceso (bench) ----------------------------------------


class ProveedorEnHilo:
    """El proveedor en un hilo con su propio bucle (contexto): para las pruebas."""

    def __init__(self, latencia: Latencia | None = None) -> None:
        self.proveedor = Proveedor(latencia=latencia)
        self._bucle = asyncio.new_event_loop()
        self._hilo = threading.Thread(target=self._bucle.run_forever, name="proveedor-latencia",
                                      daemon=True)

    @property
    def url(self) -> str:
        return self.proveedor.url

    @property
    def registro(self) -> Registro:
        return self.proveedor.registro

    def __enter__(self) -> ProveedorEnHilo:
        self._hilo.start()
        asyncio.run_coroutine_threadsafe(self.proveedor.arrancar(), self._bucle).result(10)
        asyncio.run_coroutine_threadsafe(self.proveedor.servir(), self._bucle)
        return self

    def __exit__(self, *exc: object) -> None:
        async def parar() -> None:
            otras = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for tarea in otras:  # el servidor y las conexiones abiertas
                tarea.cancel()
            await asyncio.gather(*otras, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(parar(), self._bucle).result(10)
        self._bucle.call_soon_threadsafe(self._bucle.stop)
        self._hilo.join(timeout=5)
        self._bucle.close()



class ProveedorEnProceso:
    """El proveedor en otro proceso (contexto). ``url`` para el producto; ``estadisticas()``."""

    def __init__(self, latencia: Latencia | None = None) -> None:
        self.latencia = latencia or Latencia()

    def __enter__(self) -> ProveedorEnProceso:
        from tests.apoyo.rutas import RAIZ

        self.proceso = subprocess.Popen(
            [sys.executable, "-u", "-m", "tests.apoyo.proveedor_latencia",
             "--primer-token", str(self.latencia.primer_token),
             "--tokens-por-segundo", str(self.latencia.tokens_por_segundo)],
            cwd=RAIZ, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )
        linea = self.proceso.stdout.readline()
        if not linea.startswith("PROVEEDOR_URL="):
            self.proceso.kill()
            raise RuntimeError(f"el proveedor de latencia no arrancó: {linea!r}")
        self.url = linea.split("=", 1)[1].strip()
        return self

    def _raiz(self) -> str:
        return self.url.rsplit("/v1", 1)[0]

    def estadisticas(self) -> dict[str, Any]:
        import httpx

        return httpx.get(self._raiz() + RUTA_ESTADISTICAS, timeout=30).json()

    def reiniciar(self) -> None:
        import httpx

        httpx.post(self._raiz() + RUTA_REINICIAR, timeout=30).raise_for_status()

    def fijar_latencia(self, latencia: Latencia) -> None:
        """Cambia la latencia del proceso en marcha (los servidores siguen apuntando aquí)."""
        import httpx

        httpx.post(self._raiz() + RUTA_LATENCIA, timeout=30, json={
            "primer_token": latencia.primer_token, "tokens_por_segundo": latencia.tokens_por_segundo,
        }).raise_for_status()

    def __exit__(self, *exc: object) -> None:
        self.proceso.send_signal(signal.SIGINT)
        try:
            self.proceso.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proceso.kill()
            self.proceso.wait(timeout=5)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.apoyo.proveedor_latencia",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--puerto", type=int, default=0)
    parser.add_argument("--primer-token", type=float, default=Latencia.primer_token)
    parser.add_argument("--tokens-por-segundo", type=float, default=Latencia.tokens_por_segundo)
    args = parser.parse_args(argv)
    siguiente_paso({"messages": []})  # importa LangChain y las reglas antes de decir «listo»

    async def principal() -> None:
        proveedor = Proveedor(latencia=Latencia(args.primer_token, args.tokens_por_segundo),
                              puerto=args.puerto)
        await proveedor.arrancar()
        print(f"PROVEEDOR_URL={proveedor.url}", flush=True)
        await proveedor.servir()

    try:
        asyncio.run(principal())
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
