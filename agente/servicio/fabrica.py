"""Construye el servicio completo desde los ajustes: pool, checkpointer, modelo, agente, trazas."""

from __future__ import annotations

from agente.bd.checkpointer import SaverDePool
from agente.bd.pool import abrir_pool
from agente.bd.url import url_basedatos
from agente.servicio.conversaciones.candados import CandadosHilo
from agente.servicio.conversaciones.limite import LimiteEjecuciones
from agente.servicio.fachada import Servicio
from agente.servicio.pagos.pasarela_registrada import PasarelaRegistrada
from agente.servicio.politica.comprobar_operaciones import comprobar_operaciones
from nucleo.ajustes import Ajustes

__all__ = ["CONEXIONES_PROPIAS", "crear_servicio"]

# Fuera del pool: la de los candados de hilo (CandadosHilo) y la del LISTEN (escucha()).
CONEXIONES_PROPIAS = 2


def crear_servicio(
    ajustes: Ajustes,
    *,
    url: str | None = None,
    modelo=None,
    pasarela=None,
    trazador=None,
    pausa_reintentos: float = 0.2,
    espera_candado: float = 30.0,
) -> Servicio:
    from agente.construir import construir_agente
    from agente.middleware.prompt_gestionado import fuente_desde_ajustes
    from agente.modelos import crear_modelo
    from agente.trazas import Trazador
    from caja.pasarelas import pasarela_desde_ajustes

    # AGENTE_POOL_MAX es el presupuesto del proceso: las dos conexiones propias cuentan.
    pool = abrir_pool(url or url_basedatos(ajustes), max_size=ajustes.pool_max - CONEXIONES_PROPIAS,
                      espera=ajustes.pool_espera)
    # Una operación con efecto sin sus filas en la matriz pediría un regional para todo: no arranca.
    try:
        with pool.connection() as conexion:
            comprobar_operaciones(conexion)
    except BaseException:
        pool.close()
        raise
    pasarela = PasarelaRegistrada(
        interna=pasarela if pasarela is not None else pasarela_desde_ajustes(pool, ajustes)
    )
    # Una conexión propia retiene los candados de hilo: ninguna ejecución ocupa el pool
    # mientras el modelo piensa. Su comprobación (fencing) va antes de cada efecto.
    candados = CandadosHilo(conninfo=pool.conninfo)
    fuente_prompt = fuente_desde_ajustes(ajustes)
    agente = construir_agente(
        modelo if modelo is not None else crear_modelo(
            ajustes.modelo, base_url=ajustes.modelo_base_url, sin_reintentos=True
        ),
        SaverDePool(pool, vigencia=candados.comprobar),
        pool=pool,
        pasarela=pasarela,
        llamadas_modelo_turno=ajustes.max_llamadas_modelo_turno,
        llamadas_modelo_hilo=ajustes.max_llamadas_modelo_hilo,
        pausa_reintentos=pausa_reintentos,
        vigencia=candados.comprobar,
        fuente_prompt=fuente_prompt,
    )
    trazador = trazador if trazador is not None else Trazador.desde_ajustes(ajustes)
    trazador.version_prompt = fuente_prompt.version  # cada traza dice qué prompt se usó
    return Servicio(
        pool=pool,
        agente=agente,
        trazador=trazador,
        espera_candado=espera_candado,
        pasarela=pasarela,
        candados=candados,
        limite=LimiteEjecuciones(maximo=ajustes.ejecuciones_max, espera=ajustes.espera_ejecucion),
    )
