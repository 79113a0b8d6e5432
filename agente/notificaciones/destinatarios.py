"""A quién avisar de una pausa, y a quién más cuando la espera se alarga.

- ``avisar_aprobacion(conexion, aviso)``: al pausar, dentro de la transacción que encola
  la aprobación. Avisa a quienes pueden firmar en la tienda, empezando por el rol mínimo
  que exige la matriz (con doble firma, también a los de debajo, que pueden ser la otra
  firma); si nadie de ese nivel tiene contacto, sube de nivel. Nunca rompe la pausa: un
  error aquí se registra y se deshace solo su parte (un savepoint).
- ``avisos_de_escalado(conexion, ahora)``: qué pausas llevan más de ``escalado_minutos``
  de horario de la tienda (contados desde ``aprobaciones_pendientes.creada``; sin horario
  si el aviso es urgente) por cada nivel ya avisado.
- ``escalar_pendientes(conexion, ahora=...)``: avisa al siguiente nivel de cada una
  (seguro en varios procesos: ``SKIP LOCKED`` y claves deterministas).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Protocol

import psycopg
from psycopg.types.json import Jsonb

from agente.notificaciones.cola_avisos import clave_aviso, encolar_aviso
from agente.notificaciones.horario import minutos_en_horario, siguiente_apertura
from agente.notificaciones.trabajador import horario_de_fila
from herramientas.registro import REGISTRO
from nucleo import dinero
from politicas.lectura_matriz import leer_matriz, leer_matriz_por_id
from politicas.matriz_autoridad import Matriz, Requisito, autoridad_necesaria, oleadas_de_aviso

__all__ = ["AvisoAprobacion", "Escalado", "avisar_aprobacion", "avisos_de_escalado", "escalar_pendientes"]

logger = logging.getLogger(__name__)

SELECT_TIENDA_SQL = """
SELECT t.nombre, to_jsonb(a) - 'secreto_webhook' AS horario, a.urgente_desde, a.escalado_minutos
FROM tiendas t LEFT JOIN avisos_tienda a ON a.tienda = t.id
WHERE t.id = %(tienda)s
"""
SELECT_DESTINATARIOS_SQL = """
SELECT f.encargado_id, f.nombre, f.rol, c.canal, c.direccion
FROM firmantes_tienda f
JOIN contactos_firmantes c ON c.encargado_id = f.encargado_id AND c.baja IS NULL
WHERE f.tienda = %(tienda)s AND f.rol = ANY(%(roles)s)
ORDER BY f.encargado_id, c.canal, c.direccion
"""
# Al pausar: la tienda y, de una vez, los contactos activos de todos los roles que alguna
# oleada avisará (la primera que tenga alguno se elige en Python), en el orden de entrega.
SELECT_TIENDA_Y_DESTINATARIOS_SQL = """
SELECT t.nombre, to_jsonb(a) - 'secreto_webhook' AS horario, a.urgente_desde,
       coalesce((
           SELECT jsonb_agg(jsonb_build_object(
                      'encargado_id', f.encargado_id, 'nombre', f.nombre, 'rol', f.rol,
                      'canal', c.canal, 'direccion', c.direccion)
                  ORDER BY f.encargado_id, c.canal, c.direccion)
           FROM firmantes_tienda f
           JOIN contactos_firmantes c ON c.encargado_id = f.encargado_id AND c.baja IS NULL
           WHERE f.tienda = t.id AND f.rol = ANY(%(roles)s)
       ), '[]'::jsonb) AS destinatarios
FROM tiendas t LEFT JOIN avisos_tienda a ON a.tienda = t.id
WHERE t.id = %(tienda)s
"""
# El aviso de la pausa (ya con su oleada) y sus filas de la cola de avisos en una
# sentencia: si la pausa ya tenía aviso (segunda llamada), no se encola nada.
REGISTRAR_AVISO_SQL = """
WITH registrada AS (
    INSERT INTO avisos_aprobacion
        (thread_id, interrupt_id, tienda, regla, importe, firmas, rol_minimo, matriz_id, datos,
         urgente, oleada, agotado)
    VALUES (%(thread_id)s, %(interrupt_id)s, %(tienda)s, %(regla)s, %(importe)s, %(firmas)s,
            %(rol_minimo)s, %(matriz_id)s, %(datos)s, %(urgente)s, %(oleada)s, %(agotado)s)
    ON CONFLICT (thread_id, interrupt_id) DO NOTHING
    RETURNING thread_id
), encolados AS (
    INSERT INTO avisos_salida
        (clave, thread_id, interrupt_id, tienda, encargado_id, canal, direccion, tipo, paso,
         datos, urgente, proximo_intento)
    SELECT s.clave, %(thread_id)s, %(interrupt_id)s, %(tienda)s, s.encargado_id, s.canal,
           s.direccion, 'pendiente', 0, s.datos, %(urgente)s, %(no_antes_de)s
    FROM registrada,
         jsonb_to_recordset(%(salida)s) AS s(clave text, encargado_id text, canal text,
                                            direccion text, datos jsonb, n int)
    ORDER BY s.n
    ON CONFLICT (clave) DO NOTHING
    RETURNING id
)
SELECT EXISTS (SELECT 1 FROM registrada) AS registrada, (SELECT count(*) FROM encolados) AS encolados
"""
ACTUALIZAR_OLEADA_SQL = """
UPDATE avisos_aprobacion
SET oleada = %(oleada)s, escalados = %(escalados)s, agotado = %(agotado)s
WHERE thread_id = %(thread_id)s AND interrupt_id = %(interrupt_id)s
"""
SELECT_ESCALABLES_SQL = """
SELECT v.thread_id, v.interrupt_id, v.tienda, v.escalados, v.urgente, a.creada,
       to_jsonb(t) - 'secreto_webhook' AS horario, coalesce(t.escalado_minutos, 30) AS escalado_minutos
FROM avisos_aprobacion v
JOIN aprobaciones_pendientes a ON a.thread_id = v.thread_id AND a.interrupt_id = v.interrupt_id
LEFT JOIN avisos_tienda t ON t.tienda = v.tienda
WHERE NOT v.agotado
ORDER BY a.creada, v.thread_id
"""
# Una pausa ya decidida (o reemplazada por otra) no escala más: deja de leerse en cada pasada.
CERRAR_DECIDIDAS_SQL = """
UPDATE avisos_aprobacion v SET agotado = true
WHERE NOT v.agotado AND NOT EXISTS (
    SELECT 1 FROM aprobaciones_pendientes a
    WHERE a.thread_id = v.thread_id AND a.interrupt_id = v.interrupt_id)
"""
BLOQUEAR_AVISO_SQL = """
SELECT * FROM avisos_aprobacion
WHERE thread_id = %(thread_id)s AND interrupt_id = %(interrupt_id)s
  AND escalados = %(escalados)s AND NOT agotado
FOR UPDATE SKIP LOCKED
"""


class _Autoridad(Protocol):
    importe: Decimal | None
    firmas: int
    rol_minimo: str


@dataclass(frozen=True, kw_only=True)
class AvisoAprobacion:
    """Lo que el servicio sabe al pausar.

    ``importe``: el de la autoridad (el reembolso, la diferencia del cambio).
    ``requisito``: la autoridad fijada por la política (``Requisito`` o cualquier objeto
    con ``importe``, ``firmas`` y ``rol_minimo``); None = se calcula aquí con la matriz.
    ``matriz_id``: la versión con la que decidió la política; None = la vigente.
    ``matriz``: esa versión, si quien avisa ya la leyó (ahorra leerla otra vez).
    ``urgente``: None = según ``avisos_tienda.urgente_desde``.
    """

    thread_id: str
    interrupt_id: str
    tienda: str
    cliente_id: str
    herramienta: str
    importe: Any = None
    pedido: str | None = None
    motivos: tuple[str, ...] = ()
    requisito: _Autoridad | None = None
    matriz_id: int | None = None
    matriz: Matriz | None = None
    urgente: bool | None = None


@dataclass(frozen=True)
class Escalado:
    thread_id: str
    interrupt_id: str
    tienda: str
    paso: int
    espera_minutos: int


def _ahora(ahora: datetime | None) -> datetime:
    return ahora or datetime.now(UTC)


def _matriz(conexion: psycopg.Connection, tienda: str, matriz_id: int | None) -> Matriz:
    matriz = (
        leer_matriz_por_id(conexion, matriz_id) if matriz_id is not None
        else leer_matriz(conexion, tienda=tienda)
    )
    if matriz is None:
        raise LookupError(f"no hay matriz de autoridad para {tienda} (¿falta sql/008?)")
    return matriz


def _encolar_oleada(
    conexion: psycopg.Connection, *, base: Mapping[str, Any], roles: tuple[str, ...],
    tienda: str, thread_id: str, interrupt_id: str, tipo: str, paso: int, urgente: bool,
    no_antes_de: datetime,
) -> int:
    """Encola un aviso por contacto activo de quien tiene ``roles`` en la tienda; cuántos."""
    filas = conexion.execute(SELECT_DESTINATARIOS_SQL, {"tienda": tienda, "roles": list(roles)}).fetchall()
    for fila in filas:
        encolar_aviso(
            conexion, tienda=tienda, encargado_id=fila["encargado_id"], canal=fila["canal"],
            direccion=fila["direccion"], thread_id=thread_id, interrupt_id=interrupt_id,
            tipo=tipo, paso=paso, urgente=urgente, no_antes_de=no_antes_de,
            datos={**base, "destinatario": fila["nombre"], "rol_destinatario": fila["rol"]},
        )
    return len(filas)


def avisar_aprobacion(
    conexion: psycopg.Connection, aviso: AvisoAprobacion, *, ahora: datetime | None = None
) -> int:
    """Encola los avisos de una pausa nueva; devuelve cuántos. Una segunda llamada con la
    misma (hilo, interrupción) no encola nada. Nunca lanza: devuelve 0 y lo registra."""
    try:
        with conexion.transaction():
            return _avisar(conexion, aviso, _ahora(ahora))
    except Exception:
        logger.exception("no se pudieron encolar los avisos de %s (la pausa sigue)", aviso.thread_id)
        return 0


def _avisar(conexion: psycopg.Connection, aviso: AvisoAprobacion, ahora: datetime) -> int:
    # Dos viajes: la tienda con sus posibles destinatarios, y el aviso con su bandeja.
    herramienta = REGISTRO.get(aviso.herramienta)
    regla = herramienta.regla if herramienta else None
    matriz = aviso.matriz
    if matriz is None or (aviso.matriz_id is not None and matriz.id != aviso.matriz_id):
        matriz = _matriz(conexion, aviso.tienda, aviso.matriz_id)
    requisito = aviso.requisito or autoridad_necesaria(matriz, regla, aviso.importe)
    requisito = Requisito(requisito.importe, requisito.firmas, requisito.rol_minimo)
    oleadas = oleadas_de_aviso(matriz, requisito)
    tienda = conexion.execute(
        SELECT_TIENDA_Y_DESTINATARIOS_SQL,
        {"tienda": aviso.tienda, "roles": sorted({rol for roles in oleadas for rol in roles})},
    ).fetchone()
    umbral = tienda["urgente_desde"] if tienda else None
    urgente = aviso.urgente if aviso.urgente is not None else bool(
        umbral is not None and requisito.importe is not None and requisito.importe >= umbral
    )
    base = {
        "tienda": aviso.tienda,
        "tienda_nombre": tienda["nombre"] if tienda else aviso.tienda,
        "thread_id": aviso.thread_id,
        "herramienta": aviso.herramienta,
        "titulo": herramienta.titulo_encargado if herramienta else aviso.herramienta,
        "importe": None if requisito.importe is None else dinero.texto(requisito.importe),
        "pedido": aviso.pedido,
        "cliente_id": aviso.cliente_id,
        "motivos": list(aviso.motivos),
        "firmas": requisito.firmas,
        "rol_minimo": requisito.rol_minimo,
        "urgente": urgente,
        "tipo": "pendiente",
    }
    oleada, elegidos = _primera_oleada(oleadas, tienda["destinatarios"] if tienda else [])
    horario = horario_de_fila(tienda["horario"] if tienda else None)
    no_antes_de = ahora if urgente else siguiente_apertura(horario, ahora)
    salida = [
        {
            "n": n,
            "clave": clave_aviso(
                thread_id=aviso.thread_id, interrupt_id=aviso.interrupt_id,
                encargado_id=d["encargado_id"], canal=d["canal"], direccion=d["direccion"],
                tipo="pendiente", paso=0,
            ),
            "encargado_id": d["encargado_id"], "canal": d["canal"], "direccion": d["direccion"],
            "datos": {**base, "destinatario": d["nombre"], "rol_destinatario": d["rol"]},
        }
        for n, d in enumerate(elegidos)
    ]
    fila = conexion.execute(
        REGISTRAR_AVISO_SQL,
        {
            "thread_id": aviso.thread_id, "interrupt_id": aviso.interrupt_id,
            "tienda": aviso.tienda, "regla": regla, "importe": requisito.importe,
            "firmas": requisito.firmas, "rol_minimo": requisito.rol_minimo,
            "matriz_id": matriz.id, "datos": Jsonb(base), "urgente": urgente,
            # Sin oleadas (no debería pasar) queda como antes: oleada 0 y sin agotar.
            "oleada": oleada, "agotado": bool(oleadas) and oleada >= len(oleadas) - 1,
            "salida": Jsonb(salida), "no_antes_de": no_antes_de,
        },
    ).fetchone()
    return len(elegidos) if fila["registrada"] else 0


def _primera_oleada(
    oleadas: tuple[tuple[str, ...], ...], destinatarios: list[dict[str, Any]]
) -> tuple[int, list[dict[str, Any]]]:
    """La primera oleada con algún contacto (o la última, aunque no tenga) y sus contactos."""
    for indice, roles in enumerate(oleadas):
        elegidos = [d for d in destinatarios if d["rol"] in roles]
        if elegidos or indice == len(oleadas) - 1:
            return indice, elegidos
    return 0, []


def _actualizar(
    conexion: psycopg.Connection, thread_id: str, interrupt_id: str, oleada: int,
    escalados: int, total: int,
) -> None:
    conexion.execute(
        ACTUALIZAR_OLEADA_SQL,
        {"thread_id": thread_id, "interrupt_id": interrupt_id, "oleada": oleada,
         "escalados": escalados, "agotado": oleada >= total - 1},
    )


def avisos_de_escalado(conexion: psycopg.Connection, ahora: datetime | None = None) -> list[Escalado]:
    """Las pausas pendientes que ya deben avisar al siguiente nivel (el paso que toca)."""
    ahora = _ahora(ahora)
    vencidas = []
    for fila in conexion.execute(SELECT_ESCALABLES_SQL).fetchall():
        if fila["urgente"]:
            minutos = max(0.0, (ahora - fila["creada"]).total_seconds() / 60)
        else:
            try:
                minutos = minutos_en_horario(horario_de_fila(fila["horario"]), fila["creada"], ahora)
            except Exception:  # una tienda mal configurada no para el escalado de las demás
                logger.exception("horario de avisos no válido en %s", fila["tienda"])
                continue
        if minutos >= (fila["escalados"] + 1) * fila["escalado_minutos"]:
            vencidas.append(
                Escalado(fila["thread_id"], fila["interrupt_id"], fila["tienda"],
                         fila["escalados"] + 1, int(minutos))
            )
    return vencidas


def escalar_pendientes(conexion: psycopg.Connection, *, ahora: datetime | None = None) -> int:
    """Avisa al siguiente nivel de cada pausa vencida; devuelve cuántos avisos encoló.
    Cada pausa en su transacción: una que falla se registra y no para a las demás."""
    ahora = _ahora(ahora)
    conexion.execute(CERRAR_DECIDIDAS_SQL)
    total = 0
    for escalado in avisos_de_escalado(conexion, ahora):
        try:
            with conexion.transaction():
                total += _escalar(conexion, escalado, ahora)
        except Exception:
            logger.exception("no se pudo escalar la aprobación de %s", escalado.thread_id)
    return total


def _escalar(conexion: psycopg.Connection, escalado: Escalado, ahora: datetime) -> int:
    fila = conexion.execute(
        BLOQUEAR_AVISO_SQL,
        {"thread_id": escalado.thread_id, "interrupt_id": escalado.interrupt_id,
         "escalados": escalado.paso - 1},
    ).fetchone()
    if fila is None:  # otro proceso lo está escalando o ya lo hizo
        return 0
    matriz = _matriz(conexion, fila["tienda"], fila["matriz_id"])
    requisito = Requisito(fila["importe"], fila["firmas"], fila["rol_minimo"])
    oleadas = oleadas_de_aviso(matriz, requisito)
    base = {**fila["datos"], "tipo": "escalado", "espera_minutos": escalado.espera_minutos}
    tienda = conexion.execute(SELECT_TIENDA_SQL, {"tienda": fila["tienda"]}).fetchone()
    horario = horario_de_fila(tienda["horario"] if tienda else None)
    no_antes_de = ahora if fila["urgente"] else siguiente_apertura(horario, ahora)
    for indice in range(fila["oleada"] + 1, len(oleadas)):
        encolados = _encolar_oleada(
            conexion, base=base, roles=oleadas[indice], tienda=fila["tienda"],
            thread_id=escalado.thread_id, interrupt_id=escalado.interrupt_id, tipo="escalado",
            paso=escalado.paso, urgente=fila["urgente"], no_antes_de=no_antes_de,
        )
        if encolados:
            _actualizar(conexion, escalado.thread_id, escalado.interrupt_id, indice,
                        escalado.paso, len(oleadas))
            return encolados
    _actualizar(conexion, escalado.thread_id, escalado.interrupt_id, len(oleadas) - 1,
                escalado.paso, len(oleadas))
    return 0
