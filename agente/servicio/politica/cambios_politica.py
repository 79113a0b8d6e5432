"""Cambios de la política de una tienda con separación de funciones.

- ``proponer``: solo un gerente de la tienda o un regional de su región. Cada valor contra
  su dominio (422 con el rango); nadie fija un valor por encima de su propio límite (403).
  Si el cambio solo **endurece**, se aplica al momento (versión nueva: quién, cuándo, por
  qué). Si algo **amplía**, nada cambia: queda una **solicitud** en ``solicitudes_politica``
  con la diferencia de cada valor (antes → después, en español), su plazo (las
  ``horas_caducidad`` de la tienda) y un aviso a quien puede firmarla por la bandeja de
  salida de avisos.
- ``decidir``: la firma (o el rechazo, con motivo) de alguien **por encima del autor** en
  la cadena de la tienda (``politicas.gobierno.puede_firmar_cambio``): nunca el autor,
  nunca un rol cuyo límite sube, nunca con valores por encima del límite de quien firma.
  Al firmar se vuelve a comparar con la política vigente en ese momento y se aplica como
  versión nueva que dice quién la firmó y de qué solicitud sale.
- ``solicitudes_de`` y ``detalle_para``: lo que ve quien administra (las de sus tiendas).
- ``caducar``: las solicitudes que nadie firmó a tiempo quedan ``caducada`` (la pasada de
  tareas periódicas), y también las de un autor dado de baja.
- Una solicitud cuyo autor se dio de baja, o ya no administra la tienda (otro rol, otra
  tienda), no se firma ni se rechaza: al intentarlo caduca y responde 409 con el motivo
  (issue 39). La fila del autor se lee ``FOR SHARE``: darle de baja espera a una firma en
  curso, y una firma espera a una baja en curso y la ve.

Todo bajo el candado de la política de la tienda (``claves_candado.CANDADO_POLITICA_SQL``):
proponer, firmar y aplicar comparan siempre con la vigente.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from agente.notificaciones.cola_avisos import encolar_aviso
from agente.servicio.politica.gestion_autoridad import Ambito, ambito_firmante
from agente.servicio.politica.politica_tienda import (
    ResultadoCambio,
    aplicar,
    comprobar_administrador,
    comprobar_coherencia,
    comprobar_tienda,
    leer_cambio,
    matriz_vigente,
    umbrales_vigentes,
    ver,
)
from nucleo.claves_candado import CANDADO_POLITICA_SQL
from nucleo.errores import (
    DecisionNoValida,
    NadaPendiente,
    PlazoVencido,
    Prohibido,
    YaDecidida,
)
from politicas.gobierno import (
    Cambio,
    Diferencia,
    amplia,
    diferencias,
    por_encima_de_su_limite,
    puede_firmar_cambio,
)

__all__ = [
    "caducar",
    "decidir",
    "detalle",
    "detalle_para",
    "firmantes_posibles",
    "listar",
    "proponer",
    "solicitudes_de",
]

INSERT_SOLICITUD_SQL = """
INSERT INTO solicitudes_politica (tienda, autor, autor_rol, cambio, diferencias, motivo, caduca, canal)
SELECT %(tienda)s, %(autor)s, %(autor_rol)s, %(cambio)s, %(diferencias)s, %(motivo)s,
       now() + make_interval(hours => %(horas)s), %(canal)s
RETURNING id
"""
# Una solicitud con los nombres de autor y firmante, y si venció.
_SOLICITUD_SQL = """
SELECT s.*, t.nombre AS tienda_nombre, a.nombre AS autor_nombre, d.nombre AS decidida_por_nombre,
       s.estado = 'pendiente' AND s.caduca <= now() AS vencida
FROM solicitudes_politica s
JOIN tiendas t ON t.id = s.tienda
JOIN encargados a ON a.id = s.autor
LEFT JOIN encargados d ON d.id = s.decidida_por
"""
SELECT_SOLICITUD_SQL = _SOLICITUD_SQL + "WHERE s.id = %(id)s"
BLOQUEAR_SOLICITUD_SQL = "SELECT id FROM solicitudes_politica WHERE id = %(id)s FOR UPDATE"
# Las de unas tiendas, por estado (None = todas), la más antigua primero entre las
# pendientes y la más reciente primero entre las decididas.
LISTAR_SQL = _SOLICITUD_SQL + """
WHERE s.tienda = ANY(%(tiendas)s::text[]) AND (%(estado)s::text IS NULL OR s.estado = %(estado)s)
ORDER BY (s.estado = 'pendiente') DESC,
         CASE WHEN s.estado = 'pendiente' THEN s.creada END ASC, s.creada DESC, s.id DESC
LIMIT %(limite)s
"""
# Quién puede firmar la solicitud de un autor con ese rol en esa tienda: activos, de la
# tienda (o regionales de su región), de un rol por encima (o del más alto si el autor
# ya lo es), que no sean el autor; con sus contactos vigentes para el aviso.
FIRMANTES_POSIBLES_SQL = """
SELECT f.encargado_id, f.nombre, f.rol, c.canal, c.direccion
FROM firmantes_tienda f
JOIN roles_firma rf ON rf.rol = f.rol
JOIN roles_firma ra ON ra.rol = %(autor_rol)s
LEFT JOIN contactos_firmantes c ON c.encargado_id = f.encargado_id AND c.baja IS NULL
WHERE f.tienda = %(tienda)s AND f.encargado_id <> %(autor)s
  AND (rf.nivel > ra.nivel
       OR (rf.nivel = ra.nivel AND ra.nivel = (SELECT max(nivel) FROM roles_firma)))
ORDER BY rf.nivel, f.encargado_id, c.id
"""
DECIDIR_SQL = """
UPDATE solicitudes_politica
SET estado = %(estado)s, decidida = now(), decidida_por = %(firmante)s, decidida_rol = %(rol)s,
    motivo_decision = %(motivo)s, version_umbrales = %(version)s, matriz_id = %(matriz_id)s,
    canal_decision = %(canal)s
WHERE id = %(id)s AND estado = 'pendiente'
"""
CADUCAR_SQL = """
UPDATE solicitudes_politica s
SET estado = 'caducada', decidida = now(),
    motivo_decision = CASE WHEN s.caduca <= now() THEN NULL ELSE %(motivo_baja)s END
WHERE s.estado = 'pendiente'
  AND (s.caduca <= now() OR EXISTS (SELECT 1 FROM encargados e WHERE e.id = s.autor AND NOT e.activo))
RETURNING s.id
"""
# El autor de la solicitud, bloqueado frente a su baja o a un cambio de rol o de tienda
# (un UPDATE de su fila espera a esta transacción, y esta lee la fila que dejó el UPDATE).
BLOQUEAR_AUTOR_SQL = "SELECT id FROM encargados WHERE id = %(autor)s FOR SHARE"
CADUCAR_POR_AUTOR_SQL = """
UPDATE solicitudes_politica SET estado = 'caducada', decidida = now(), motivo_decision = %(motivo)s
WHERE id = %(id)s AND estado = 'pendiente'
"""
MOTIVO_AUTOR_DE_BAJA = "su autor ya no puede cambiar la política de la tienda (de baja, otro rol u otra tienda)"


def _publica(fila: Mapping[str, Any]) -> dict[str, Any]:
    datos = dict(fila)
    datos["firman"] = _quien_firma(fila["autor_rol"])
    datos.pop("vencida", None)
    return datos


def _quien_firma(autor_rol: str) -> str:
    if autor_rol == "gerente":
        return "un regional de la región de la tienda"
    return "otro regional de la región de la tienda"


def detalle(conexion: psycopg.Connection, solicitud_id: int) -> dict[str, Any]:
    fila = conexion.execute(SELECT_SOLICITUD_SQL, {"id": solicitud_id}).fetchone()
    if fila is None:
        raise NadaPendiente(f"no hay ninguna solicitud de cambio de política {solicitud_id}")
    return _publica(fila)


def listar(
    conexion: psycopg.Connection, tiendas: list[str], *, estado: str | None = "pendiente", limite: int = 50
) -> list[dict[str, Any]]:
    filas = conexion.execute(
        LISTAR_SQL, {"tiendas": tiendas, "estado": estado, "limite": limite}).fetchall()
    return [_publica(f) for f in filas]


def solicitudes_de(
    conexion: psycopg.Connection, *, firmante: str, tienda: str | None = None, estado: str | None = "pendiente"
) -> list[dict[str, Any]]:
    """Las solicitudes de las tiendas que ``firmante`` administra, o solo las de ``tienda``
    (``TiendaNoEncontrada`` si no existe; ``Prohibido`` si no administra alguna)."""
    if tienda:
        comprobar_tienda(conexion, tienda)
    tiendas = [tienda] if tienda else list(ambito_firmante(conexion, firmante).tiendas)
    for t in tiendas:
        comprobar_administrador(conexion, firmante, t)
    return listar(conexion, tiendas, estado=estado)


def detalle_para(conexion: psycopg.Connection, solicitud_id: int, *, firmante: str | None) -> dict[str, Any]:
    """``detalle``; con ``firmante``, solo si administra la tienda de la solicitud (``Prohibido``)."""
    solicitud = detalle(conexion, solicitud_id)
    if firmante is not None:
        comprobar_administrador(conexion, firmante, solicitud["tienda"])
    return solicitud


def firmantes_posibles(conexion: psycopg.Connection, *, tienda: str, autor: str, autor_rol: str) -> list[dict]:
    """Filas (persona, canal, dirección) de quien puede firmar; canal None = sin contacto."""
    return conexion.execute(
        FIRMANTES_POSIBLES_SQL, {"tienda": tienda, "autor": autor, "autor_rol": autor_rol}).fetchall()


def _avisar(conexion: psycopg.Connection, solicitud: Mapping[str, Any]) -> None:
    """Un aviso por contacto de cada persona que puede firmar (en la misma transacción)."""
    ahora = datetime.now(UTC)
    for fila in firmantes_posibles(
            conexion, tienda=solicitud["tienda"], autor=solicitud["autor"], autor_rol=solicitud["autor_rol"]):
        if fila["canal"] is None:
            continue
        encolar_aviso(
            conexion, tienda=solicitud["tienda"], encargado_id=fila["encargado_id"], canal=fila["canal"],
            direccion=fila["direccion"], interrupt_id=f"politica:{solicitud['id']}", tipo="cambio_politica",
            no_antes_de=ahora, datos={
                "tipo": "cambio_politica", "solicitud_id": solicitud["id"], "tienda": solicitud["tienda"],
                "tienda_nombre": solicitud["tienda_nombre"], "autor": solicitud["autor"],
                "autor_nombre": solicitud["autor_nombre"], "autor_rol": solicitud["autor_rol"],
                "diferencias": [d["texto"] for d in solicitud["diferencias"]],
                "motivo": solicitud["motivo"], "destinatario": fila["nombre"],
            })


def _crear(
    conexion: psycopg.Connection, *, tienda: str, autor: Ambito, cambio: Cambio,
    difs: tuple[Diferencia, ...], motivo: str | None, horas: int, canal: str | None = None,
) -> dict[str, Any]:
    solicitud_id = conexion.execute(INSERT_SOLICITUD_SQL, {
        "tienda": tienda, "autor": autor.encargado_id, "autor_rol": autor.rol,
        "cambio": Jsonb(cambio.como_json()), "diferencias": Jsonb([d.como_json() for d in difs]),
        "motivo": motivo, "horas": horas, "canal": canal,
    }).fetchone()["id"]
    solicitud = detalle(conexion, solicitud_id)
    _avisar(conexion, solicitud)
    return solicitud


def proponer(
    conexion: psycopg.Connection,
    *,
    tienda: str,
    autor: str,
    umbrales: Mapping[str, Any] | None = None,
    limites: Mapping[str, Mapping[str, Any]] | None = None,
    dos_firmas: Mapping[str, Any] | None = None,
    motivo: str | None = None,
    canal: str | None = None,
) -> ResultadoCambio:
    """Propone un cambio de la política de ``tienda``: lo aplica si solo endurece; si amplía,
    crea la solicitud que firmará alguien por encima de ``autor``.

    ``limites``: ``{regla: {rol: importe | None}}`` (None = sin límite) sobre la matriz
    vigente; ``dos_firmas``: ``{regla: importe | None}`` (None = nunca).

    Raises:
        Prohibido: ``autor`` no administra esa tienda, o fija algo por encima de su propio
            límite. FueraDeDominio: un valor fuera de su dominio. DecisionNoValida: una
            matriz incoherente.
    """
    with conexion.transaction():
        comprobar_tienda(conexion, tienda)
        ambito = comprobar_administrador(conexion, autor, tienda)
        conexion.execute(CANDADO_POLITICA_SQL, {"tienda": tienda})
        matriz = matriz_vigente(conexion, tienda)
        cambio = leer_cambio(matriz, umbrales, limites, dos_firmas)
        comprobar_coherencia(matriz, cambio)  # 422 ya, no una solicitud que falla al firmarla
        vigentes = umbrales_vigentes(conexion, tienda)
        difs = diferencias(vigentes, matriz, cambio)
        if not difs:
            return ResultadoCambio(estado="sin_cambios", politica=ver(conexion, tienda))
        fuera = por_encima_de_su_limite(matriz, ambito.rol, difs)
        if fuera:
            raise Prohibido("nadie fija un valor por encima de su propio límite: " + "; ".join(fuera))
        if amplia(difs):
            solicitud = _crear(conexion, tienda=tienda, autor=ambito, cambio=cambio, difs=difs,
                               motivo=motivo, horas=int(vigentes["horas_caducidad"]), canal=canal)
            return ResultadoCambio(estado="pendiente_firma", solicitud=solicitud)
        aplicar(conexion, tienda=tienda, cambio=cambio, matriz=matriz, autor=autor, motivo=motivo)
        return ResultadoCambio(estado="aplicada", politica=ver(conexion, tienda))


def decidir(
    conexion: psycopg.Connection, *, solicitud_id: int, firmante: str, aprobar: bool, motivo: str | None = None,
    canal: str | None = None,
) -> dict[str, Any]:
    """Firma (``aprobar``) o rechaza (con ``motivo``) una solicitud pendiente; devuelve la
    solicitud ya decidida.

    Raises:
        NadaPendiente (404): no existe. YaDecidida (409): ya se decidió o caducó.
        PlazoVencido (409): venció su plazo. Prohibido (403): ``firmante`` no está por
        encima del autor en esa tienda, es el autor, el cambio sube el límite de su rol o
        pone un valor por encima de su límite. DecisionNoValida (422): rechazo sin motivo.
    """
    motivo = (motivo or "").strip() or None
    if not aprobar and motivo is None:
        raise DecisionNoValida("para rechazar un cambio de política hace falta un motivo")
    with conexion.transaction():
        if conexion.execute(BLOQUEAR_SOLICITUD_SQL, {"id": solicitud_id}).fetchone() is None:
            raise NadaPendiente(f"no hay ninguna solicitud de cambio de política {solicitud_id}")
        fila = conexion.execute(SELECT_SOLICITUD_SQL, {"id": solicitud_id}).fetchone()
        if fila["estado"] != "pendiente":
            raise YaDecidida(f"la solicitud {solicitud_id} ya está {fila['estado']}"
                             + (f": {fila['motivo_decision']}" if fila["estado"] == "caducada"
                                and fila["motivo_decision"] else ""))
        if fila["vencida"]:
            raise PlazoVencido(f"la solicitud {solicitud_id} venció sin firma: propón el cambio otra vez")
        ambito = ambito_firmante(conexion, firmante)
        if fila["tienda"] not in ambito.tiendas:
            raise Prohibido("solo firmas cambios de política de tus tiendas")
        autor_vale = _autor_administra(conexion, fila["autor"], fila["tienda"])
        if autor_vale:
            return _decidir_vigente(conexion, fila, ambito=ambito, firmante=firmante, aprobar=aprobar,
                                    motivo=motivo, canal=canal)
        conexion.execute(CADUCAR_POR_AUTOR_SQL, {"id": solicitud_id, "motivo": MOTIVO_AUTOR_DE_BAJA})
    # La caducidad queda confirmada; el 409 lo cuenta.
    raise YaDecidida(
        f"la solicitud {solicitud_id} ha caducado: su autor, {fila['autor_nombre']}, ya no puede "
        "cambiar la política de la tienda (de baja, otro rol u otra tienda); si el cambio sigue "
        "haciendo falta, que alguien con permiso lo proponga otra vez")


def _decidir_vigente(
    conexion: psycopg.Connection, fila: Mapping[str, Any], *, ambito: Ambito, firmante: str, aprobar: bool,
    motivo: str | None, canal: str | None = None,
) -> dict[str, Any]:
    """La firma o el rechazo de una solicitud pendiente cuyo autor sigue administrando la
    tienda (en la transacción de ``decidir``, con la solicitud y el autor bloqueados)."""
    solicitud_id = fila["id"]
    conexion.execute(CANDADO_POLITICA_SQL, {"tienda": fila["tienda"]})
    matriz = matriz_vigente(conexion, fila["tienda"])
    cambio = Cambio.de_json(fila["cambio"])
    difs = diferencias(umbrales_vigentes(conexion, fila["tienda"]), matriz, cambio) if aprobar else ()
    no = puede_firmar_cambio(matriz, autor=fila["autor"], autor_rol=fila["autor_rol"], firmante=firmante,
                             firmante_rol=ambito.rol, difs=difs)
    if no:
        raise Prohibido(no)
    version = matriz_id = None
    if aprobar and difs:
        fuera = por_encima_de_su_limite(matriz, fila["autor_rol"], difs)
        if fuera:
            raise Prohibido("el autor ya no podría fijar estos valores (" + "; ".join(fuera)
                            + "): recházala")
        version, matriz_id = aplicar(
            conexion, tienda=fila["tienda"], cambio=cambio, matriz=matriz, autor=fila["autor"],
            motivo=fila["motivo"], firmada_por=firmante, solicitud_id=solicitud_id,
        )
    conexion.execute(DECIDIR_SQL, {
        "id": solicitud_id, "estado": "aplicada" if aprobar else "rechazada", "firmante": firmante,
        "rol": ambito.rol, "motivo": motivo, "version": version, "matriz_id": matriz_id,
        "canal": canal,
    })
    return detalle(conexion, solicitud_id)


def _autor_administra(conexion: psycopg.Connection, autor: str, tienda: str) -> bool:
    """¿Sigue ``autor`` pudiendo cambiar la política de ``tienda``? Bloquea su fila
    (``FOR SHARE``) y lo lee en las sentencias siguientes, con la foto de después."""
    conexion.execute(BLOQUEAR_AUTOR_SQL, {"autor": autor})
    try:
        comprobar_administrador(conexion, autor, tienda)
    except Prohibido:
        return False
    return True


def caducar(conexion: psycopg.Connection) -> list[int]:
    """Las solicitudes vencidas, o de un autor dado de baja, pasan a ``caducada``; devuelve sus ids."""
    return [f["id"] for f in conexion.execute(CADUCAR_SQL, {"motivo_baja": MOTIVO_AUTOR_DE_BAJA}).fetchall()]
