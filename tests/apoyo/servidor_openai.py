"""Servidor local compatible con OpenAI para pruebas: respuestas guionizadas, peticiones grabadas.

Escucha en 127.0.0.1 con puerto aleatorio (``http.server`` en un hilo) y atiende
``POST /v1/chat/completions``, en JSON o en streaming SSE si la petición trae
``"stream": true``. Cada petición consume la siguiente respuesta de la cola (texto,
llamadas a herramientas con ids elegidos por el servidor, o un error HTTP) y queda
grabada para comprobar lo que recibió el "proveedor": los esquemas de las herramientas
y que el historial es válido (cada ``tool_call`` del asistente tiene su mensaje ``tool``).

Uso::

    with ServidorOpenAI() as servidor:
        [id_llamada] = servidor.responder_llamadas(("consultar_pedido", {"pedido": "P-1"}))
        servidor.responder_texto("Listo.")
        modelo = ChatOpenAI(model="prueba", base_url=servidor.base_url, api_key="sk-test",
                            max_retries=0)
        ...
        assert servidor.peticiones[1].llamadas_sin_respuesta() == []

Las fixtures que lo arrancan viven en el ``conftest.py`` o en el módulo de prueba que las usa:
aquí no hay fixtures (nadie importa fixtures de otro módulo).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

RUTA = "/v1/chat/completions"


@dataclass
class Peticion:
    """Una petición recibida: ruta, cabeceras y cuerpo JSON."""

    ruta: str
    cabeceras: dict[str, str]
    cuerpo: dict[str, Any]

    @property
    def mensajes(self) -> list[dict[str, Any]]:
        return self.cuerpo.get("messages") or []

    def herramientas(self) -> dict[str, dict[str, Any]]:
        """Nombre -> esquema JSON de parámetros de cada herramienta enviada."""
        return {
            h["function"]["name"]: h["function"].get("parameters") or {}
            for h in self.cuerpo.get("tools") or []
            if h.get("type") == "function"
        }

    def llamadas_sin_respuesta(self) -> list[str]:
        """Ids de ``tool_calls`` del asistente sin mensaje ``tool`` que los responda.

        Un proveedor real rechaza un historial así; debe salir vacío.
        """
        respondidas = {m.get("tool_call_id") for m in self.mensajes if m.get("role") == "tool"}
        return [
            llamada["id"]
            for m in self.mensajes
            if m.get("role") == "assistant"
            for llamada in m.get("tool_calls") or []
            if llamada["id"] not in respondidas
        ]

    def respuestas_huerfanas(self) -> list[str]:
        """Mensajes ``tool`` que no responden a ninguna llamada anterior (también inválido)."""
        vistas: set[str] = set()
        huerfanas = []
        for m in self.mensajes:
            if m.get("role") == "assistant":
                vistas.update(llamada["id"] for llamada in m.get("tool_calls") or [])
            elif m.get("role") == "tool" and m.get("tool_call_id") not in vistas:
                huerfanas.append(m.get("tool_call_id"))
        return huerfanas


@dataclass
class _Respuesta:
    texto: str | None = None
    llamadas: list[dict[str, Any]] = field(default_factory=list)
    estado_http: int = 200
    error: str | None = None


class ServidorOpenAI:
    """Servidor de chat completions con guion. Contexto: arranca al entrar, para al salir."""

    def __init__(self, modelo: str = "guion-local") -> None:
        self.modelo = modelo
        self.peticiones: list[Peticion] = []
        self._cola: deque[_Respuesta] = deque()
        self._cerrojo = threading.Lock()
        self._contador = 0
        self._http: ThreadingHTTPServer | None = None
        self._hilo: threading.Thread | None = None

    # -- guion

    def responder_texto(self, texto: str) -> None:
        with self._cerrojo:
            self._cola.append(_Respuesta(texto=texto))

    def responder_llamadas(self, *llamadas: tuple[str, dict[str, Any]], texto: str | None = None) -> list[str]:
        """Encola UNA respuesta con estas llamadas; devuelve los ids elegidos por el servidor."""
        with self._cerrojo:
            ids = []
            preparadas = []
            for nombre, args in llamadas:
                self._contador += 1
                id_llamada = f"call_srv_{self._contador:04d}"
                ids.append(id_llamada)
                preparadas.append({"id": id_llamada, "nombre": nombre, "args": args})
            self._cola.append(_Respuesta(texto=texto, llamadas=preparadas))
            return ids

    def responder_error(self, estado_http: int = 500, mensaje: str = "fallo simulado") -> None:
        with self._cerrojo:
            self._cola.append(_Respuesta(estado_http=estado_http, error=mensaje))

    @property
    def pendientes(self) -> int:
        with self._cerrojo:
            return len(self._cola)

    # -- ciclo de vida

    @property
    def base_url(self) -> str:
        if self._http is None:
            raise RuntimeError("el servidor no está arrancado")
        host, puerto = self._http.server_address[:2]
        return f"http://{host}:{puerto}/v1"

    def arrancar(self) -> ServidorOpenAI:
        servidor = self

        class Manejador(_Manejador):
            pass

        Manejador.servidor = servidor
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Manejador)
        self._http.daemon_threads = True
        self._hilo = threading.Thread(
            target=self._http.serve_forever, kwargs={"poll_interval": 0.05}, name="servidor-openai",
            daemon=True,
        )
        self._hilo.start()
        return self

    def parar(self) -> None:
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
        if self._hilo is not None:
            self._hilo.join(timeout=5)
        self._http = None
        self._hilo = None

    def __enter__(self) -> ServidorOpenAI:
        return self.arrancar()

    def __exit__(self, *exc: object) -> None:
        self.parar()

    # -- lo que usa el manejador

    def _atender(self, peticion: Peticion) -> _Respuesta:
        with self._cerrojo:
            self.peticiones.append(peticion)
            if not self._cola:
                return _Respuesta(estado_http=500, error="el guion no tiene más respuestas")
            return self._cola.popleft()


class _Manejador(BaseHTTPRequestHandler):
    servidor: ServidorOpenAI

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - firma de http.server
        pass  # sin ruido en la salida de pytest

    def do_POST(self) -> None:  # noqa: N802 - nombre de http.server
        longitud = int(self.headers.get("Content-Length") or 0)
        crudo = self.rfile.read(longitud) if longitud else b""
        if self.path.rstrip("/") != RUTA:
            self._json(404, {"error": {"message": f"ruta desconocida: {self.path}", "type": "not_found"}})
            return
        try:
            cuerpo = json.loads(crudo or b"{}")
        except json.JSONDecodeError:
            self._json(400, {"error": {"message": "JSON inválido", "type": "invalid_request_error"}})
            return
        respuesta = self.servidor._atender(Peticion(self.path, dict(self.headers.items()), cuerpo))
        if respuesta.error is not None:
            self._json(
                respuesta.estado_http, {"error": {"message": respuesta.error, "type": "server_error"}}
            )
            return
        if cuerpo.get("stream"):
            self._sse(cuerpo, respuesta)
        else:
            self._json(200, self._completion(cuerpo, respuesta))

    # -- formatos

    def _json(self, estado: int, datos: dict[str, Any]) -> None:
        crudo = json.dumps(datos, ensure_ascii=False).encode()
        self.send_response(estado)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(crudo)))
        self.end_headers()
        self.wfile.write(crudo)

    def _comun(self, cuerpo: dict[str, Any], objeto: str) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-{len(self.servidor.peticiones):04d}",
            "object": objeto,
            "created": int(time.time()),
            "model": cuerpo.get("model") or self.servidor.modelo,
        }

    @staticmethod
    def _llamadas_openai(respuesta: _Respuesta) -> list[dict[str, Any]]:
        return [
            {
                "id": llamada["id"],
                "type": "function",
                "function": {
                    "name": llamada["nombre"],
                    "arguments": json.dumps(llamada["args"], ensure_ascii=False),
                },
            }
            for llamada in respuesta.llamadas
        ]

    def _completion(self, cuerpo: dict[str, Any], respuesta: _Respuesta) -> dict[str, Any]:
        mensaje: dict[str, Any] = {"role": "assistant", "content": respuesta.texto}
        if respuesta.llamadas:
            mensaje["tool_calls"] = self._llamadas_openai(respuesta)
        return {
            **self._comun(cuerpo, "chat.completion"),
            "choices": [
                {
                    "index": 0,
                    "message": mensaje,
                    "finish_reason": "tool_calls" if respuesta.llamadas else "stop",
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }

    def _sse(self, cuerpo: dict[str, Any], respuesta: _Respuesta) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        comun = self._comun(cuerpo, "chat.completion.chunk")

        def evento(delta: dict[str, Any], fin: str | None = None) -> None:
            datos = {**comun, "choices": [{"index": 0, "delta": delta, "finish_reason": fin}]}
            self.wfile.write(f"data: {json.dumps(datos, ensure_ascii=False)}\n\n".encode())
            self.wfile.flush()

        evento({"role": "assistant", "content": ""})
        if respuesta.texto:
            partes = respuesta.texto.split(" ")
            for i, palabra in enumerate(partes):
                # Con su espacio, para que la concatenación dé el texto exacto.
                evento({"content": palabra + (" " if i < len(partes) - 1 else "")})
        for indice, llamada in enumerate(self._llamadas_openai(respuesta)):
            evento({"tool_calls": [{"index": indice, **llamada, "function": {
                "name": llamada["function"]["name"], "arguments": ""}}]})
            argumentos = llamada["function"]["arguments"]
            mitad = len(argumentos) // 2
            for trozo in (argumentos[:mitad], argumentos[mitad:]):
                evento({"tool_calls": [{"index": indice, "function": {"arguments": trozo}}]})
        evento({}, "tool_calls" if respuesta.llamadas else "stop")
        if (cuerpo.get("stream_options") or {}).get("include_usage"):
            uso = {**comun, "choices": [],
                   "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
            self.wfile.write(f"data: {json.dumps(uso)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
