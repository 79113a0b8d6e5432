"""Tiendas y regiones: crear, cambiar, desactivar y listar, con la separación de funciones
de ``reglas`` y cada cambio anotado (``registro.anotar``).

Una tienda lleva nombre, zona horaria (la de sus avisos, ``avisos_tienda``), dirección
(calle, código postal y localidad; la provincia sale del código postal) y región. Al
cambiar una tienda o su región se rehacen las tiendas de los regionales de esa región
(``sincronizar_regionales``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import psycopg

from agente.servicio.alta import reglas
from agente.servicio.alta.registro import anotar, gestor, texto, validar_id
from nucleo.direcciones import provincia_de
from nucleo.errores import NoCuadra, NoEncontrado, YaExiste

__all__ = [
    "crear_region",
    "crear_tienda",
    "desactivar_region",
    "desactivar_tienda",
    "editar_region",
    "editar_tienda",
    "listar_regiones",
    "listar_tiendas",
    "region_de_tienda",
    "sincronizar_regionales",
]

# Las tiendas de los regionales con región: las activas de su región (las de la región
# ``%(region)s`` o las de la persona ``%(persona)s``).
SINCRONIZAR_SQL = """
WITH regionales AS (
    SELECT id, region FROM encargados
    WHERE rol = 'regional' AND region IS NOT NULL
      AND (region = %(region)s::text OR id = %(persona)s::text)
), sobran AS (
    DELETE FROM tiendas_regionales tr USING regionales r
    WHERE tr.encargado_id = r.id
      AND NOT EXISTS (SELECT 1 FROM tiendas t WHERE t.id = tr.tienda AND t.region = r.region AND t.activa)
)
INSERT INTO tiendas_regionales (encargado_id, tienda)
SELECT r.id, t.id FROM regionales r JOIN tiendas t ON t.region = r.region AND t.activa
ON CONFLICT DO NOTHING
"""
SELECT_TIENDAS_SQL = """
SELECT t.id, t.nombre, t.region, t.activa, coalesce(a.zona_horaria, 'Europe/Madrid') AS zona_horaria,
       t.calle, t.codigo_postal, t.localidad, t.provincia
FROM tiendas t LEFT JOIN avisos_tienda a ON a.tienda = t.id
WHERE (%(id)s::text IS NULL OR t.id = %(id)s)
  AND (%(todas)s OR t.region = %(region)s::text OR t.id = %(tienda)s::text)
ORDER BY t.id
"""
INSERT_TIENDA_SQL = """
INSERT INTO tiendas (id, nombre, region, calle, codigo_postal, localidad, provincia)
VALUES (%(id)s, %(nombre)s, %(region)s, %(calle)s, %(codigo_postal)s, %(localidad)s, %(provincia)s)
ON CONFLICT (id) DO NOTHING RETURNING id
"""
UPDATE_TIENDA_SQL = """
UPDATE tiendas SET nombre = %(nombre)s, region = %(region)s, activa = %(activa)s, calle = %(calle)s,
       codigo_postal = %(codigo_postal)s, localidad = %(localidad)s, provincia = %(provincia)s
WHERE id = %(id)s
"""
ZONA_SQL = """
INSERT INTO avisos_tienda (tienda, zona_horaria) VALUES (%(id)s, %(zona_horaria)s)
ON CONFLICT (tienda) DO UPDATE SET zona_horaria = EXCLUDED.zona_horaria
"""
POLITICA_SQL = "INSERT INTO politicas_tienda (tienda) VALUES (%(id)s) ON CONFLICT (tienda) DO NOTHING"
SELECT_REGIONES_SQL = """
SELECT r.id, r.nombre, r.activa,
       array(SELECT t.id FROM tiendas t WHERE t.region = r.id AND t.activa ORDER BY t.id) AS tiendas
FROM regiones r
WHERE (%(id)s::text IS NULL OR r.id = %(id)s) AND (%(todas)s OR r.id = %(region)s::text)
ORDER BY r.id
"""
INSERT_REGION_SQL = """
INSERT INTO regiones (id, nombre) VALUES (%(id)s, %(nombre)s) ON CONFLICT (id) DO NOTHING RETURNING id
"""
UPDATE_REGION_SQL = "UPDATE regiones SET nombre = %(nombre)s, activa = %(activa)s WHERE id = %(id)s"
REGION_DE_TIENDA_SQL = "SELECT region, activa FROM tiendas WHERE id = %(id)s"
REGION_ACTIVA_SQL = "SELECT activa FROM regiones WHERE id = %(id)s"

CAMPOS_TIENDA = ("nombre", "zona_horaria", "calle", "codigo_postal", "localidad", "provincia", "region")


def sincronizar_regionales(conexion: psycopg.Connection, *, region: str | None = None,
                           persona: str | None = None) -> None:
    conexion.execute(SINCRONIZAR_SQL, {"region": region, "persona": persona})


def region_de_tienda(conexion: psycopg.Connection, tienda: str) -> str | None:
    fila = conexion.execute(REGION_DE_TIENDA_SQL, {"id": tienda}).fetchone()
    return fila["region"] if fila else None


def _alcance(quien: reglas.Persona) -> dict[str, Any]:
    return {"todas": quien.administrador, "region": quien.region, "tienda": quien.tienda}


# -- tiendas ---------------------------------------------------------------------------------

def listar_tiendas(conexion: psycopg.Connection, quien: str) -> list[dict[str, Any]]:
    """Las tiendas que ve quien pregunta: todas (administrador), las de su región y la suya."""
    g = gestor(conexion, quien)
    return conexion.execute(SELECT_TIENDAS_SQL, {"id": None, **_alcance(g)}).fetchall()


def _tienda(conexion: psycopg.Connection, tienda: str) -> dict[str, Any]:
    fila = conexion.execute(SELECT_TIENDAS_SQL, {"id": tienda, "todas": True, "region": None,
                                                 "tienda": None}).fetchone()
    if fila is None:
        raise NoEncontrado(f"No hay ninguna tienda {tienda}.")
    return dict(fila)


def _region_activa(conexion: psycopg.Connection, region: str | None) -> None:
    if region is None:
        return
    fila = conexion.execute(REGION_ACTIVA_SQL, {"id": region}).fetchone()
    if fila is None:
        raise NoEncontrado(f"No hay ninguna región {region}: créala antes con «agente regiones crear».")
    if not fila["activa"]:
        raise NoCuadra(f"La región {region} está desactivada.")


def _datos_tienda(datos: Mapping[str, Any]) -> dict[str, Any]:
    """Los campos de una tienda, validados: nombre, zona, dirección con su provincia, región."""
    zona = texto(datos.get("zona_horaria") or "Europe/Madrid", "la zona horaria", maximo=60)
    try:
        ZoneInfo(zona)
    except (ZoneInfoNotFoundError, ValueError):
        raise NoCuadra(f"La zona horaria {zona} no existe (p. ej. «Europe/Madrid» o «Atlantic/Canary»).") from None
    codigo_postal = texto(datos.get("codigo_postal"), "el código postal", maximo=5, opcional=True)
    provincia = provincia_de(codigo_postal) if codigo_postal else None
    if codigo_postal and provincia is None:
        raise NoCuadra(f"El código postal {codigo_postal} no es español (cinco cifras, de 01000 a 52999).")
    pedida = texto(datos.get("provincia"), "la provincia", opcional=True)
    if pedida and provincia and pedida.casefold() != provincia.casefold():
        raise NoCuadra(f"El código postal {codigo_postal} es de {provincia}, no de {pedida}.")
    region = datos.get("region") or None
    return {
        "nombre": texto(datos.get("nombre"), "el nombre de la tienda"),
        "zona_horaria": zona,
        "calle": texto(datos.get("calle"), "la calle", maximo=200, opcional=True),
        "codigo_postal": codigo_postal,
        "localidad": texto(datos.get("localidad"), "la localidad", opcional=True),
        "provincia": provincia or pedida,
        "region": validar_id(region, "la región") if region else None,
    }


def crear_tienda(conexion: psycopg.Connection, quien: str, canal: str, datos: Mapping[str, Any]) -> dict[str, Any]:
    """Una tienda nueva, con su política por defecto y su zona horaria."""
    with conexion.transaction():
        g = gestor(conexion, quien)
        reglas.comprobar_gestor_de_tiendas(g)
        tienda = validar_id(datos.get("id"), "la tienda")
        campos = _datos_tienda(datos)
        reglas.comprobar_tienda(g, None, campos["region"], nueva=True)
        _region_activa(conexion, campos["region"])
        if conexion.execute(INSERT_TIENDA_SQL, {"id": tienda, **campos}).fetchone() is None:
            raise YaExiste(f"Ya hay una tienda {tienda}.")
        conexion.execute(ZONA_SQL, {"id": tienda, "zona_horaria": campos["zona_horaria"]})
        conexion.execute(POLITICA_SQL, {"id": tienda})
        sincronizar_regionales(conexion, region=campos["region"])
        despues = _tienda(conexion, tienda)
        anotar(conexion, quien=quien, canal=canal, objeto="tienda", objeto_id=tienda, accion="crear",
               antes=None, despues=despues)
    return despues


def editar_tienda(conexion: psycopg.Connection, quien: str, canal: str, tienda: str,
                  cambios: Mapping[str, Any], *, accion: str = "editar") -> dict[str, Any]:
    """Cambia los campos dados (los demás quedan); ``activa`` solo con ``desactivar_tienda``."""
    with conexion.transaction():
        g = gestor(conexion, quien)
        reglas.comprobar_gestor_de_tiendas(g)
        antes = _tienda(conexion, validar_id(tienda, "la tienda"))
        campos = _datos_tienda({**antes, **{k: v for k, v in cambios.items() if k in CAMPOS_TIENDA}})
        if "codigo_postal" in cambios and "provincia" not in cambios:
            campos["provincia"] = provincia_de(campos["codigo_postal"]) if campos["codigo_postal"] else None
        activa = False if accion == "desactivar" else antes["activa"]
        reglas.comprobar_tienda(g, antes["region"], campos["region"], nueva=False)
        if campos["region"] != antes["region"]:
            _region_activa(conexion, campos["region"])
        conexion.execute(UPDATE_TIENDA_SQL, {"id": tienda, "activa": activa, **campos})
        conexion.execute(ZONA_SQL, {"id": tienda, "zona_horaria": campos["zona_horaria"]})
        for region in {antes["region"], campos["region"]} - {None}:
            sincronizar_regionales(conexion, region=region)
        despues = _tienda(conexion, tienda)
        anotar(conexion, quien=quien, canal=canal, objeto="tienda", objeto_id=tienda, accion=accion,
               antes=antes, despues=despues)
    return despues


def desactivar_tienda(conexion: psycopg.Connection, quien: str, canal: str, tienda: str) -> dict[str, Any]:
    """La tienda deja de contar en su región (sus regionales dejan de firmar en ella)."""
    return editar_tienda(conexion, quien, canal, tienda, {}, accion="desactivar")


# -- regiones --------------------------------------------------------------------------------

def listar_regiones(conexion: psycopg.Connection, quien: str) -> list[dict[str, Any]]:
    g = gestor(conexion, quien)
    return conexion.execute(SELECT_REGIONES_SQL, {"id": None, **_alcance(g)}).fetchall()


def _region(conexion: psycopg.Connection, region: str) -> dict[str, Any]:
    fila = conexion.execute(SELECT_REGIONES_SQL, {"id": region, "todas": True, "region": None}).fetchone()
    if fila is None:
        raise NoEncontrado(f"No hay ninguna región {region}.")
    return dict(fila)


def crear_region(conexion: psycopg.Connection, quien: str, canal: str, datos: Mapping[str, Any]) -> dict[str, Any]:
    with conexion.transaction():
        reglas.comprobar_region(gestor(conexion, quien))
        region = validar_id(datos.get("id"), "la región")
        nombre = texto(datos.get("nombre"), "el nombre de la región")
        if conexion.execute(INSERT_REGION_SQL, {"id": region, "nombre": nombre}).fetchone() is None:
            raise YaExiste(f"Ya hay una región {region}.")
        despues = _region(conexion, region)
        anotar(conexion, quien=quien, canal=canal, objeto="region", objeto_id=region, accion="crear",
               antes=None, despues=despues)
    return despues


def editar_region(conexion: psycopg.Connection, quien: str, canal: str, region: str,
                  cambios: Mapping[str, Any], *, accion: str = "editar") -> dict[str, Any]:
    with conexion.transaction():
        reglas.comprobar_region(gestor(conexion, quien))
        antes = _region(conexion, validar_id(region, "la región"))
        nombre = texto(cambios.get("nombre") or antes["nombre"], "el nombre de la región")
        if accion == "desactivar" and antes["tiendas"]:
            raise YaExiste(f"La región {region} aún tiene tiendas activas ({', '.join(antes['tiendas'])}): "
                           "pásalas a otra región o desactívalas antes.")
        activa = False if accion == "desactivar" else antes["activa"]
        conexion.execute(UPDATE_REGION_SQL, {"id": region, "nombre": nombre, "activa": activa})
        despues = _region(conexion, region)
        anotar(conexion, quien=quien, canal=canal, objeto="region", objeto_id=region, accion=accion,
               antes=antes, despues=despues)
    return despues


def desactivar_region(conexion: psycopg.Connection, quien: str, canal: str, region: str) -> dict[str, Any]:
    return editar_region(conexion, quien, canal, region, {}, accion="desactivar")
