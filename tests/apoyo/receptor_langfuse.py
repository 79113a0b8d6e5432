"""Un Langfuse de mentira en 127.0.0.1 para los tests de trazas (sin red).

Recibe lo que manda el SDK 5 de Langfuse:

- ``POST /api/public/otel/v1/traces``: spans OTLP/HTTP en protobuf (gzip por defecto);
- ``POST /api/public/scores``: lista JSON de puntuaciones;
- cualquier otra ruta: 200 ``{}`` (por si el SDK consulta algo al arrancar).

Decodifica y guarda spans y puntuaciones para que los tests hagan aserciones, y
cuenta TODAS las peticiones para poder afirmar que no se envió nada.

Uso::

    with ReceptorLangfuse() as receptor:
        ... LANGFUSE_HOST = receptor.url ...
        assert receptor.spans_de(trace_id)

Se puede ejecutar como script (``python tests/apoyo/receptor_langfuse.py``) para una
prueba manual: imprime la URL y lo que va llegando.
"""

from __future__ import annotations

import gzip
import json
import threading
import zlib
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

RUTA_SPANS = "/api/public/otel/v1/traces"
RUTA_SCORES = "/api/public/scores"


@dataclass(frozen=True)
class SpanRecibido:
    trace_id: str
    span_id: str
    parent_span_id: str | None
    nombre: str
    atributos: dict[str, Any]
    estado: str = ""
    eventos: tuple[dict[str, Any], ...] = field(default_factory=tuple)

    @property
    def name(self) -> str:  # alias para quien piense en inglés al leer un test
        return self.nombre

    @property
    def attributes(self) -> dict[str, Any]:
        return self.atributos

    def texto(self) -> str:
        """Todo lo que el span transporta, como un solo texto (para buscar PII)."""
        return json.dumps(
            {
                "nombre": self.nombre,
                "atributos": self.atributos,
                "estado": self.estado,
                "eventos": list(self.eventos),
            },
            ensure_ascii=False,
            default=str,
        )


@dataclass(frozen=True)
class Peticion:
    metodo: str
    ruta: str
    cabeceras: dict[str, str]
    cuerpo: bytes


def _valor(v: Any) -> Any:
    """AnyValue de OTLP a Python."""
    tipo = v.WhichOneof("value")
    if tipo is None:
        return None
    if tipo == "array_value":
        return [_valor(x) for x in v.array_value.values]
    if tipo == "kvlist_value":
        return {kv.key: _valor(kv.value) for kv in v.kvlist_value.values}
    return getattr(v, tipo)


def decodificar_spans(cuerpo: bytes) -> list[SpanRecibido]:
    peticion = trace_service_pb2.ExportTraceServiceRequest()
    peticion.ParseFromString(cuerpo)
    spans = []
    for rs in peticion.resource_spans:
        for ss in rs.scope_spans:
            for s in ss.spans:
                spans.append(
                    SpanRecibido(
                        trace_id=s.trace_id.hex(),
                        span_id=s.span_id.hex(),
                        parent_span_id=s.parent_span_id.hex() or None,
                        nombre=s.name,
                        atributos={a.key: _valor(a.value) for a in s.attributes},
                        estado=s.status.message,
                        eventos=tuple(
                            {
                                "nombre": e.name,
                                "atributos": {a.key: _valor(a.value) for a in e.attributes},
                            }
                            for e in s.events
                        ),
                    )
                )
    return spans


def _descomprimir(cuerpo: bytes, codificacion: str) -> bytes:
    codificacion = codificacion.lower()
    if codificacion == "gzip":
        return gzip.decompress(cuerpo)
    if codificacion == "deflate":
        return zlib.decompress(cuerpo)
    return cuerpo


class ReceptorLangfuse:
    """Servidor HTTP en un hilo; ``url`` es el ``LANGFUSE_HOST`` que hay que usar."""

    def __init__(self) -> None:
        self._cerrojo = threading.Lock()
        self.peticiones: list[Peticion] = []
        self.spans: list[SpanRecibido] = []
        self.scores: list[dict[str, Any]] = []
        self.errores: list[str] = []
        self._servidor = ThreadingHTTPServer(("127.0.0.1", 0), self._manejador())
        self._servidor.daemon_threads = True
        self._hilo: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, puerto = self._servidor.server_address[:2]
        return f"http://{host}:{puerto}"

    @property
    def num_peticiones(self) -> int:
        with self._cerrojo:
            return len(self.peticiones)

    def arrancar(self) -> ReceptorLangfuse:
        self._hilo = threading.Thread(
            target=self._servidor.serve_forever, name="receptor-langfuse", daemon=True
        )
        self._hilo.start()
        return self

    def parar(self) -> None:
        self._servidor.shutdown()
        self._servidor.server_close()
        if self._hilo is not None:
            self._hilo.join(timeout=5)

    def __enter__(self) -> ReceptorLangfuse:
        return self.arrancar()

    def __exit__(self, *exc: object) -> None:
        self.parar()

    # --- consultas para los tests -------------------------------------------------

    def spans_de(self, trace_id: str) -> list[SpanRecibido]:
        with self._cerrojo:
            return [s for s in self.spans if s.trace_id == trace_id]

    def scores_de(self, trace_id: str) -> list[dict[str, Any]]:
        with self._cerrojo:
            return [s for s in self.scores if s.get("traceId") == trace_id]

    def texto_enviado(self) -> str:
        """Todo lo recibido (spans decodificados y scores) como un texto, para buscar PII."""
        with self._cerrojo:
            partes = [s.texto() for s in self.spans]
            partes += [json.dumps(s, ensure_ascii=False) for s in self.scores]
        return "\n".join(partes)

    def vaciar(self) -> None:
        with self._cerrojo:
            self.peticiones.clear()
            self.spans.clear()
            self.scores.clear()
            self.errores.clear()

    # --- servidor ------------------------------------------------------------------

    def _registrar(self, peticion: Peticion) -> tuple[int, str, bytes]:
        ruta = peticion.ruta.split("?", 1)[0].rstrip("/")
        cuerpo = _descomprimir(peticion.cuerpo, peticion.cabeceras.get("content-encoding", ""))
        try:
            if peticion.metodo == "POST" and ruta == RUTA_SPANS:
                spans = decodificar_spans(cuerpo)
                with self._cerrojo:
                    self.spans.extend(spans)
                vacia = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
                return 200, "application/x-protobuf", vacia
            if peticion.metodo == "POST" and ruta == RUTA_SCORES:
                datos = json.loads(cuerpo or b"[]")
                lote = datos if isinstance(datos, list) else [datos]
                with self._cerrojo:
                    self.scores.extend(lote)
                return 202, "application/json", b'{"message": "Accepted"}'
        except Exception as e:  # un fallo de decodificación es un fallo del test, no del SDK
            with self._cerrojo:
                self.errores.append(f"{peticion.metodo} {ruta}: {e!r}")
            return 400, "application/json", b'{"error": "no se pudo decodificar"}'
        return 200, "application/json", b"{}"

    def _manejador(self) -> type[BaseHTTPRequestHandler]:
        receptor = self

        class Manejador(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _atender(self) -> None:
                largo = int(self.headers.get("content-length") or 0)
                cuerpo = self.rfile.read(largo) if largo else b""
                peticion = Peticion(
                    metodo=self.command,
                    ruta=self.path,
                    cabeceras={k.lower(): v for k, v in self.headers.items()},
                    cuerpo=cuerpo,
                )
                with receptor._cerrojo:
                    receptor.peticiones.append(peticion)
                codigo, tipo, respuesta = receptor._registrar(peticion)
                self.send_response(codigo)
                self.send_header("content-type", tipo)
                self.send_header("content-length", str(len(respuesta)))
                self.end_headers()
                self.wfile.write(respuesta)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _atender

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Manejador


if __name__ == "__main__":
    import time

    with ReceptorLangfuse() as r:
        print(f"LANGFUSE_HOST={r.url}  (Ctrl+C para salir)", flush=True)
        vistos = 0
        try:
            while True:
                time.sleep(0.5)
                with r._cerrojo:
                    nuevas = r.peticiones[vistos:]
                    vistos = len(r.peticiones)
                for p in nuevas:
                    print(p.metodo, p.ruta, len(p.cuerpo), "bytes", flush=True)
        except KeyboardInterrupt:
            pass
