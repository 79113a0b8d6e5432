"""La aplicación FastAPI: ``crear_app(ajustes)`` y la fábrica de uvicorn ``app_desde_entorno``.

Cada proceso (worker) crea su servicio (pool, agente) y su oyente de ``LISTEN``; entre
procesos solo se comparte PostgreSQL. Sin CDN: todo lo que sirve sale de ``estaticos/``.
"""

from __future__ import annotations

import asyncio
import logging
import re
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.types import Message, Receive, Scope, Send

from agente.web.infra import contrato, disponibilidad, errores_http, metricas, recolector
from agente.web.infra.asgi import MiddlewareHttp
from agente.web.infra.cuerpo import CuerpoJson
from agente.web.infra.dependencias import AjustesWeb, ServicioWeb
from agente.web.infra.eventos import Oyente
from agente.web.infra.hebras import HebrasDelAgente
from agente.web.infra.limites import MAX_CUERPO, MAX_LOTE, LimiteCuerpo
from agente.web.infra.parada import Parada
from agente.web.infra.registro_peticiones import RegistroPeticiones
from agente.web.infra.texto_seguro import SinNulos
from agente.web.protocolo_langgraph import FormaErrorProtocolo
from agente.web.protocolo_langgraph import router as router_langgraph
from agente.web.rutas import (
    alta,
    atencion,
    avisos_cliente,
    cliente,
    demo,
    encargado,
    entrada,
    historial,
    movimientos,
    pagos,
    politica,
    portal,
    tienda,
)
from nucleo.ajustes import Ajustes
from nucleo.errores import HiloNoEncontrado

logger = logging.getLogger(__name__)

ESTATICOS = Path(__file__).resolve().parent / "estaticos"

# Sin scripts ni estilos en línea: aunque un texto se colara como HTML, no se ejecutaría.
CABECERAS_SEGURIDAD = [
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        b"connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
        b"form-action 'self'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
]


class CabecerasSeguridad(MiddlewareHttp):
    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def enviar(mensaje: Message) -> None:
            if mensaje["type"] == "http.response.start":
                mensaje.setdefault("headers", [])
                mensaje["headers"] = list(mensaje["headers"]) + CABECERAS_SEGURIDAD
            await send(mensaje)

        await self.app(scope, receive, enviar)


class _SinTokenEnLog(logging.Filter):
    """Ningún token en el log de accesos. La API ya no acepta ``?token=`` (los flujos se leen
    con la cabecera), pero un cliente antiguo podría seguir mandándolo en la URL."""

    _patron = re.compile(r"(token=)[^&\s]+")

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(
                self._patron.sub(r"\1***", a) if isinstance(a, str) else a for a in record.args
            )
        return True


def _filtrar_log_accesos() -> None:
    registro = logging.getLogger("uvicorn.access")
    if not any(isinstance(f, _SinTokenEnLog) for f in registro.filters):
        registro.addFilter(_SinTokenEnLog())


def crear_app(ajustes: Ajustes | None = None, *, servicio=None, es_servidor: bool = False) -> FastAPI:
    """La app. Sin ``servicio``, lo crea al arrancar (y lo cierra al parar). ``es_servidor``:
    el proceso es un servidor de ``agente serve`` y la app es suya (ajusta su recolector)."""
    ajustes = ajustes or Ajustes()
    ajustes.comprobar_secreto()
    _filtrar_log_accesos()

    @asynccontextmanager
    async def ciclo_de_vida(app: FastAPI):
        propio = servicio is None
        if propio:
            from agente.servicio.fabrica import crear_servicio
            from agente.servicio.operador.plataforma import url_basedatos
            from agente.servicio.operador.proceso import embebido

            previos = embebido.abiertos()
            app.state.servicio = crear_servicio(ajustes, url=url_basedatos(ajustes))
        else:
            app.state.servicio = servicio
        app.state.parada = Parada(espera=ajustes.espera_parada)
        # El límite es del servicio; aquí, hilos para llegar a él, que de parada no se reparten.
        app.state.limitador = HebrasDelAgente(
            maximo=app.state.servicio.limite.maximo, parada=app.state.parada
        )
        vigia = asyncio.create_task(app.state.parada.vigilar())
        app.state.oyente = Oyente(app.state.servicio)
        app.state.oyente.iniciar()
        parar_tareas, hilos = None, []
        if propio and ajustes.intervalo_tareas > 0:
            # Cada tarea en cada servidor, con su hilo y su candado: ninguna se hace dos veces.
            from agente.servicio.periodicas import arrancar

            # La primera pasada al arrancar: termina lo que una parada dejó a medias.
            hilos_tareas, parar_tareas = arrancar(
                app.state.servicio, cada=ajustes.intervalo_tareas,
                retencion_dias=ajustes.retencion_dias, al_arrancar=True, ajustes=ajustes,
            )
            hilos.extend(hilos_tareas)
            app.state.parada.al_parar(parar_tareas.set)
        if es_servidor:
            recolector.preparar(ajustes.gc_umbral)  # con todo lo del arranque ya creado
        try:
            yield
        finally:
            vigia.cancel()
            await app.state.parada.esperar(app.state.limitador, hilos)
            app.state.oyente.parar()
            if propio:
                app.state.servicio.cerrar()
                # Sin DATABASE_URL (``uvicorn ... --factory`` a mano, cada worker abre el embebido):
                # se suelta aquí, porque uvicorn acaba relanzando la señal y no pasa por atexit.
                embebido.soltar(excepto=previos)

    app = FastAPI(
        title="Agente de atención al cliente",
        description=(
            "API del canal web y de la bandeja del encargado. Autenticación: "
            "`Authorization: Bearer <token>` (cliente o encargado). Ingesta del back office de la "
            "tienda (`/api/tienda/v1`): `X-Clave-API`. Errores: `{\"detalle\": ...}`."
        ),
        version="1.0",
        docs_url=None,
        redoc_url=None,
        lifespan=ciclo_de_vida,
    )
    app.state.ajustes = ajustes
    app.state.oidc = entrada.clientes_oidc(ajustes)
    errores_http.instalar(app)
    contrato.instalar(app)  # el OpenAPI con los códigos de las capas comunes
    # Por dentro de LimiteCuerpo (413): cuerpo ya acotado; se revisa antes que el token.
    app.add_middleware(CuerpoJson, json_lines=frozenset({tienda.RUTA_LOTES}),
                       con_400=frozenset({pagos.RUTA_STRIPE}))
    app.add_middleware(SinNulos)  # nulos en la ruta (404) y la query (422)
    app.add_middleware(LimiteCuerpo, maximo=MAX_CUERPO, por_ruta={tienda.RUTA_LOTES: MAX_LOTE})
    app.add_middleware(FormaErrorProtocolo)  # {"detail"} bajo /langgraph, también el 413
    app.add_middleware(CabecerasSeguridad)
    app.add_middleware(RegistroPeticiones)  # la más externa: mide y registra todo

    app.include_router(disponibilidad.router)
    app.include_router(portal.router)  # GET /api/conversaciones antes que /{thread_id}
    app.include_router(cliente.router)
    app.include_router(historial.router)
    app.include_router(movimientos.router)  # todo el dinero y la mercancía que se movieron
    app.include_router(encargado.router)
    app.include_router(encargado.router_sesion)
    app.include_router(politica.router)
    app.include_router(alta.router)  # tiendas, regiones y personas (docs/empezar-tienda.md)
    app.include_router(atencion.router)  # conversaciones de la tienda y «Escribir al cliente»
    app.include_router(demo.router)
    app.include_router(pagos.router)  # webhook del proveedor de pagos (firma, sin token)
    app.include_router(avisos_cliente.router)
    app.include_router(tienda.router)
    app.include_router(router_langgraph)  # el protocolo de LangGraph (docs/protocolo-langgraph.md)
    app.include_router(entrada.router)
    app.mount("/estaticos", StaticFiles(directory=ESTATICOS), name="estaticos")

    def pagina(nombre: str) -> FileResponse:
        return FileResponse(ESTATICOS / nombre, media_type="text/html; charset=utf-8")

    @app.get("/", include_in_schema=False)
    def chat():
        return pagina("chat.html")

    @app.get("/encargado", include_in_schema=False)
    def bandeja():
        return pagina("encargado.html")

    @app.get("/entrada/correo", include_in_schema=False)
    def entrada_correo():
        return pagina("entrada_correo.html")

    @app.get("/demo", include_in_schema=False)
    def pagina_demo(ajustes_app: AjustesWeb):
        if not ajustes_app.demo:
            raise HiloNoEncontrado("no encontrado")
        return pagina("demo.html")

    @app.get("/demo/correo", include_in_schema=False)
    def demo_correo(ajustes_app: AjustesWeb):
        if not ajustes_app.demo:
            raise HiloNoEncontrado("no encontrado")
        return pagina("demo_correo.html")

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon():
        # Quien pide /favicon.ico sin leer el <link rel="icon"> (pestañas, marcadores) recibe el SVG.
        return FileResponse(ESTATICOS / "favicon.svg", media_type="image/svg+xml")

    @app.get("/docs", include_in_schema=False)
    def documentacion():
        return pagina("docs.html")

    @app.get("/metrics", summary="Métricas Prometheus", tags=["operación"], response_class=Response,
             responses={200: {"content": {"text/plain": {}}}})
    def metrics(servicio: ServicioWeb):
        """Métricas Prometheus (ver ``agente.web.infra.metricas``)."""
        return Response(metricas.exponer(servicio), media_type=metricas.TIPO_CONTENIDO)

    return app


def app_desde_entorno() -> FastAPI:
    """Fábrica de uvicorn (``factory=True``): ajustes del entorno (``DATABASE_URL`` del padre)."""
    return crear_app(Ajustes(), es_servidor=True)
