"""Las órdenes del servidor web: ``agente serve``, ``agente demo`` y el grupo ``agente token``."""

from __future__ import annotations

import os
import shutil
import tempfile

import typer

from agente.cli.comun import errores_en_una_linea, url_migrada
from agente.servicio.operador.proceso import parada_limpia

__all__ = ["demo", "serve", "token_app"]

FABRICA = "agente.web.app:app_desde_entorno"

token_app = typer.Typer(help="Emite tokens firmados con AGENTE_SECRETO, para scripts y pruebas (órdenes locales de operador).", no_args_is_help=True)


def _ajustes():
    from nucleo.ajustes import ajustes

    ajustes.cache_clear()  # demo cambia el entorno antes de leerlos
    return ajustes()


def _servir(ajustes, url: str, host: str, port: int, workers: int) -> None:
    import uvicorn

    from agente.servicio.operador.plataforma import APLICACION_SERVIDOR
    from nucleo.registro_log import config_logging, configurar

    ajustes.comprobar_secreto()
    configurar(ajustes.log_nivel)  # JSON por stderr; los workers lo aplican con log_config
    # Los workers leen la URL del entorno: ninguno arranca su propio PostgreSQL.
    os.environ["DATABASE_URL"] = url
    # Cada conexión de este proceso y de sus workers se nombra como servidor: así «agente
    # db demo» sabe que la base está en uso (libpq lee PGAPPNAME al conectar).
    os.environ["PGAPPNAME"] = APLICACION_SERVIDOR
    propia = None
    if workers > 1 and not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        # Métricas sumadas entre procesos (modo multiproceso de prometheus-client).
        propia = tempfile.mkdtemp(prefix="agente-metricas-")
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = propia
    try:
        uvicorn.run(
            FABRICA,
            factory=True,
            host=host,
            port=port,
            workers=workers,
            timeout_graceful_shutdown=ajustes.espera_parada,
            # Los 5 s de uvicorn son menos que el tiempo ocioso de un proxy (60 s en nginx y
            # en un ALB): el servidor puede cerrar una conexión a la vez que el proxy manda
            # otra petición por ella, y el cliente ve la conexión cortada (un 502).
            timeout_keep_alive=ajustes.keepalive,
            log_config=config_logging(ajustes.log_nivel),
            log_level=ajustes.log_nivel.lower(),
            access_log=False,  # lleva la IP del cliente; lo sustituye la línea «peticion»
        )
    finally:
        if propia:
            shutil.rmtree(propia, ignore_errors=True)


@errores_en_una_linea
@parada_limpia()
def serve(
    host: str = typer.Option("127.0.0.1", "--host", help="Dirección en la que escuchar."),
    port: int = typer.Option(8000, "--port", min=1, max=65535, help="Puerto."),
    workers: int = typer.Option(1, "--workers", min=1, max=64, help="Procesos (comparten solo PostgreSQL)."),
) -> None:
    """Sirve la API, la página del cliente (/) y la bandeja del encargado (/encargado).

    Orden local de operador: usa la base directamente y no actúa como ninguna persona."""

    ajustes = _ajustes()
    ajustes.comprobar_secreto()  # antes de tocar la base de datos
    ajustes.comprobar_pasarela()
    url = url_migrada(ajustes)  # el embebido se arranca en ESTE proceso y se migra una sola vez
    typer.echo(f"Sirviendo en http://{host}:{port} ({workers} proceso(s)); API en http://{host}:{port}/docs")
    _servir(ajustes, url, host, port, workers)


@errores_en_una_linea
@parada_limpia()
def demo(
    host: str = typer.Option("127.0.0.1", "--host", help="Dirección en la que escuchar."),
    port: int = typer.Option(8000, "--port", min=1, max=65535, help="Puerto."),
    pasarela: str | None = typer.Option(
        None, "--pasarela", help="Pasarela de pagos: simulada (por defecto), stripe (con las claves de "
        "AGENTE_STRIPE_*) o stripe-local (el protocolo de Stripe en local, con sus webhooks)."),
) -> None:
    """Demo sin claves: migra, carga la demo en una base vacía (si ya está, la conserva) y sirve con el modelo offline.

    Arranca también su buzón de correo (/demo/correo), su proveedor OpenID Connect (si hay Node) y,
    con --pasarela stripe-local, el servidor del protocolo de Stripe (docs/demo.md).

    Orden local de operador: usa la base directamente y no actúa como ninguna persona."""
    from agente.servicio.operador.arranque import cargar_demo_una_vez
    from agente.servicio.operador.demo import PASARELAS_DEMO, piezas_demo
    from nucleo.errores import ErrorConfiguracion

    if pasarela is not None and pasarela not in PASARELAS_DEMO:
        raise ErrorConfiguracion(f"--pasarela: elige una de {', '.join(PASARELAS_DEMO)}")
    os.environ["AGENTE_DEMO"] = "1"
    os.environ["AGENTE_MODELO"] = "offline"
    if pasarela in ("simulada", "stripe"):
        os.environ["AGENTE_PASARELA"] = pasarela
    ajustes = _ajustes()
    if pasarela != "stripe-local":
        ajustes.comprobar_pasarela()  # antes de la base y del cartel: una frase y código 2
    url = url_migrada(ajustes)
    if cargar_demo_una_vez(url) is None:  # reiniciar no revive lo que pasó en la demo
        typer.echo("La demo ya estaba cargada: se conserva lo que ha pasado (para empezar de cero, "
                   "para el servidor y ejecuta agente db demo --reiniciar).")
    base = f"http://{host}:{port}"
    buzon = ajustes.demo_buzon or ajustes.pgdata.parent / "correo-demo"
    with piezas_demo(base=base, url_bd=url, buzon=buzon, pasarela=pasarela or ajustes.pasarela,
                     decir=typer.echo) as piezas:
        ajustes = _ajustes()  # con el entorno de las piezas
        _cartel(base, host, port, piezas)
        _servir(ajustes, url, host, port, 1)


def _cartel(base: str, host: str, port: int, piezas: list[str]) -> None:
    from agente.servicio.operador.demo import CLIENTES, ENCARGADOS
    from agente.web.rutas.demo import EJEMPLOS

    typer.echo(f"Demo lista en {base}/demo (modelo offline: reglas, no un LLM).")
    typer.echo("Entra como cliente o como encargado desde esa página (cada pestaña guarda su sesión):")
    for cliente_id, tienda, nombre, _email, _tel in CLIENTES:
        if cliente_id in EJEMPLOS:
            typer.echo(f"  cliente {cliente_id}  {nombre} ({tienda}): «{EJEMPLOS[cliente_id]}»")
    for encargado_id, tienda, nombre, activo in ENCARGADOS:
        typer.echo(f"  encargado {encargado_id}  {nombre} ({tienda}){'' if activo else ' — de baja: se le rechaza'}")
    typer.echo(f"Chat del cliente: {base}/   Bandeja del encargado: {base}/encargado   API: {base}/docs")
    for linea in piezas:
        typer.echo(linea)
    otro = "" if port == 8000 and host == "127.0.0.1" else f" --servidor {base}"
    typer.echo(f"Por terminal, en otra: agente entrar --demo enc-talavera{otro} (y agente decidir HILO aprobar).")


def _emitir(rol: str, sujeto: str, horas: float | None) -> None:
    from agente.servicio.operador.arranque import tienda_para_token
    from agente.web.entrada.auth import emitir_token

    ajustes = _ajustes()
    ajustes.comprobar_secreto()  # un token firmado con el secreto de serie no sirve de nada
    url = url_migrada(ajustes)
    tienda = tienda_para_token(url, rol=rol, sujeto=sujeto)  # Prohibido si no existe o de baja
    typer.echo(emitir_token(ajustes, rol=rol, sujeto=sujeto, tienda=tienda, horas=horas))


@token_app.command("cliente")
@errores_en_una_linea
def token_cliente(
    cliente_id: str = typer.Argument(..., help="Id del cliente (p. ej. C-0001)."),
    horas: float | None = typer.Option(None, "--horas", min=0.01, help="Validez (por defecto AGENTE_TOKEN_HORAS)."),
) -> None:
    """Token de cliente para la API y la página /.

    Orden local de operador: usa la base directamente y no actúa como ninguna persona."""
    _emitir("cliente", cliente_id, horas)


@token_app.command("encargado")
@errores_en_una_linea
def token_encargado(
    encargado_id: str = typer.Argument(..., help="Id del encargado (p. ej. enc-talavera)."),
    horas: float | None = typer.Option(None, "--horas", min=0.01, help="Validez (por defecto AGENTE_TOKEN_HORAS)."),
) -> None:
    """Token de encargado para la bandeja /encargado.

    Orden local de operador: usa la base directamente y no actúa como ninguna persona."""
    _emitir("encargado", encargado_id, horas)

