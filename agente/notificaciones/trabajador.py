"""El trabajador de avisos: entrega lo vencido de la cola de avisos, con reintentos.

``entregar_pendientes`` hace una pasada y vuelve; el servicio la llama cada pocos
segundos (o la CLI en bucle). Seguro en varios procesos a la vez (``SKIP LOCKED``). Un
canal que falla reintenta con espera exponencial (``espera_base * 2**(intentos-1)``,
como mucho ``espera_max``) hasta ``intentos_max``; después el aviso queda ``fallido``.
Un reintento fuera del horario de la tienda espera a la apertura, salvo si es urgente.
Los avisos no tocan nunca la aprobación: un canal caído no la bloquea ni la pierde.
Los avisos al cliente (canal ``cliente``) salen por la ruta de su tienda
(``entrega_cliente``): correo o Apprise, según los ajustes.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from typing import Any

from psycopg_pool import ConnectionPool

from agente.notificaciones.canales import Canal, Entrega, ErrorCanal, canales_desde_ajustes
from agente.notificaciones.cola_avisos import (
    marcar_descartado,
    marcar_enviado,
    marcar_fallo,
    reclamar,
)
from agente.notificaciones.entrega_cliente import RutasCliente, entrega_cliente
from agente.notificaciones.horario import Horario, siguiente_apertura
from agente.notificaciones.plantillas import cuerpo_json, cuerpo_slack, pintar
from nucleo.esperas import espera_tras

__all__ = ["Pasada", "entregar_pendientes", "entregar_segun_ajustes", "horario_de_fila", "rutas_cliente"]

logger = logging.getLogger(__name__)


@dataclass
class Pasada:
    enviados: int = 0
    reintentos: int = 0
    fallidos: int = 0
    descartados: int = 0

    @property
    def total(self) -> int:
        return self.enviados + self.reintentos + self.fallidos + self.descartados


def horario_de_fila(fila: Mapping[str, Any] | None) -> Horario:
    """El ``Horario`` de una fila de ``avisos_tienda`` (o el de por defecto si no hay)."""
    if not fila:
        return Horario()
    return Horario(
        zona=fila["zona_horaria"],
        abre=fila["abre"] if isinstance(fila["abre"], time) else time.fromisoformat(fila["abre"]),
        cierra=fila["cierra"] if isinstance(fila["cierra"], time) else time.fromisoformat(fila["cierra"]),
        dias=frozenset(fila["dias"]),
    )


def _en_horario(horario: Mapping[str, Any] | None, instante: datetime) -> datetime:
    """La siguiente apertura; con un horario ilegible en la base, ``instante`` (mejor avisar)."""
    try:
        return siguiente_apertura(horario_de_fila(horario), instante)
    except Exception:
        logger.exception("horario de avisos no válido: %s", horario)
        return instante


def _entrega(fila: Mapping[str, Any], base_url: str) -> Entrega:
    mensaje = pintar(fila["datos"], base_url)
    return Entrega(
        clave=fila["clave"], canal=fila["canal"], direccion=fila["direccion"],
        asunto=mensaje.asunto, texto=mensaje.texto,
        cuerpo=cuerpo_json(fila["clave"], fila["datos"], mensaje),
        cuerpo_slack=cuerpo_slack(fila["datos"], mensaje), secreto=fila["secreto"],
    )


def _canal_y_entrega(
    fila: Mapping[str, Any], canales: Mapping[str, Canal], base_url: str, clientes: RutasCliente | None
) -> tuple[Canal, Entrega] | str:
    """El canal y la entrega de una fila, o el motivo para descartarla; ``ErrorCanal`` si
    el canal que pide no está en este proceso (reintento: otro proceso o más tarde)."""
    if fila.get("tipo") != "cliente":
        return canales[fila["canal"]], _entrega(fila, base_url)
    if clientes is None:
        raise ErrorCanal("este proceso no entrega avisos a clientes")
    destino = entrega_cliente(fila, clientes)
    if isinstance(destino, str):
        return destino
    nombre, entrega = destino
    if nombre not in canales:
        raise ErrorCanal(f"sin canal {nombre} en este proceso (¿falta AGENTE_SMTP_URL?)")
    return canales[nombre], entrega


def entregar_pendientes(
    pool: ConnectionPool,
    canales: Mapping[str, Canal],
    *,
    base_url: str,
    clientes: RutasCliente | None = None,
    ahora: datetime | None = None,
    limite: int = 50,
    intentos_max: int = 8,
    espera_base: float = 30.0,
    espera_max: float = 3600.0,
    plazo: float = 120.0,
) -> Pasada:
    """Una pasada: reclama hasta ``limite`` avisos vencidos de los ``canales`` que tiene
    este proceso, los envía y marca. ``plazo``: segundos que un aviso reclamado queda
    reservado para este proceso (si muere antes de marcar, sale otra vez después).
    ``clientes``: con ellas, también los avisos a clientes."""
    ahora = ahora or datetime.now(UTC)
    pasada = Pasada()
    nombres = list(canales) + (["cliente"] if clientes is not None else [])
    if not nombres:
        return pasada
    with pool.connection() as conexion:
        filas = reclamar(conexion, canales=nombres, ahora=ahora, limite=limite, plazo=plazo)
    # Se envía sin tener una conexión del pool: un canal lento no quita sitio a los turnos.
    for fila in filas:
        if not fila["vigente"]:
            pasada.descartados += 1
            continue
        try:
            destino = _canal_y_entrega(fila, canales, base_url, clientes)
            if isinstance(destino, str):
                with pool.connection() as conexion:
                    marcar_descartado(conexion, fila["id"], motivo=destino)
                pasada.descartados += 1
                continue
            destino[0].enviar(destino[1])
        except Exception as exc:  # cualquier fallo del canal es un reintento, no el fin de la pasada
            definitivo = fila["intentos"] >= intentos_max
            siguiente = ahora + timedelta(
                seconds=espera_tras(fila["intentos"], base=espera_base, maximo=espera_max)
            )
            if not fila["urgente"]:
                siguiente = _en_horario(fila["horario"], siguiente)
            with pool.connection() as conexion:
                marcar_fallo(
                    conexion, fila["id"], error=str(exc) or type(exc).__name__,
                    siguiente=siguiente, definitivo=definitivo,
                )
            logger.warning(
                "aviso %s por %s no entregado (intento %s): %s",
                fila["clave"], fila["canal"], fila["intentos"], exc,
            )
            if definitivo:
                pasada.fallidos += 1
            else:
                pasada.reintentos += 1
            continue
        with pool.connection() as conexion:
            marcar_enviado(conexion, fila["id"], ahora=datetime.now(UTC))
        pasada.enviados += 1
    return pasada


def rutas_cliente(ajustes: Any) -> RutasCliente:
    """Las rutas de los avisos a clientes según ``ajustes`` (enlaces firmados con su secreto)."""
    return RutasCliente(
        secreto=ajustes.secreto.get_secret_value(), base_url=ajustes.avisos_base_url,
        horas_enlace=ajustes.avisos_cliente_enlace_horas, por_tienda=dict(ajustes.avisos_cliente_canal),
    )


def entregar_segun_ajustes(pool: ConnectionPool, ajustes: Any, *, ahora: datetime | None = None) -> Pasada:
    """``entregar_pendientes`` con los canales, la URL base y los reintentos de ``ajustes``."""
    return entregar_pendientes(
        pool, canales_desde_ajustes(ajustes), base_url=ajustes.avisos_base_url, ahora=ahora,
        clientes=rutas_cliente(ajustes),
        intentos_max=ajustes.avisos_intentos, espera_base=ajustes.avisos_espera_base,
        espera_max=ajustes.avisos_espera_max,
    )
