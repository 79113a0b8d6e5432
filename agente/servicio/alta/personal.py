"""Las personas de la tienda (encargados, gerentes, regionales y administradores): crear,
cambiar, desactivar y listar, con la separación de funciones de ``reglas`` y cada cambio
anotado.

Un encargado y un gerente tienen tienda; un regional, región (y quizá tienda); el correo
es con el que entra (``docs/entrada-personal.md``) y es único sin distinguir mayúsculas.
Su correo queda también como contacto para los avisos de firma (``contactos_firmantes``).
Desactivar es ``activo = false``: el disparador de ``sql/014`` suelta sus «lo atiendo yo».
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import psycopg

from agente.servicio.alta import reglas
from agente.servicio.alta.registro import (
    SELECT_PERSONA_SQL,
    anotar,
    gestor,
    persona_de_fila,
    texto,
    validar_id,
)
from agente.servicio.alta.tiendas import region_de_tienda, sincronizar_regionales
from nucleo.errores import DatosNoValidos, NoCuadra, NoEncontrado, YaExiste

__all__ = [
    "comprobar_datos",
    "crear_persona",
    "desactivar_persona",
    "editar_persona",
    "listar_personas",
    "normalizar_email",
]

RE_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")

# Las que gestiona quien pregunta: todas (administrador), las de su región (regional) o
# las de su tienda (gerente); un encargado, solo a sí mismo.
LISTAR_SQL = """
SELECT e.id, e.nombre, e.email, e.rol, e.tienda, e.region, e.administrador, e.activo
FROM encargados e LEFT JOIN tiendas t ON t.id = e.tienda
WHERE %(todas)s OR e.id = %(quien)s
   OR (%(region)s::text IS NOT NULL AND (e.region = %(region)s OR t.region = %(region)s))
   OR (%(gerente)s AND e.tienda = %(tienda)s::text)
ORDER BY e.tienda NULLS FIRST, e.id
"""
INSERT_SQL = """
INSERT INTO encargados (id, nombre, email, rol, tienda, region, administrador)
VALUES (%(id)s, %(nombre)s, %(email)s, %(rol)s, %(tienda)s, %(region)s, %(administrador)s)
ON CONFLICT (id) DO NOTHING RETURNING id
"""
UPDATE_SQL = """
UPDATE encargados SET nombre = %(nombre)s, email = %(email)s, rol = %(rol)s, tienda = %(tienda)s,
       region = %(region)s, administrador = %(administrador)s, activo = %(activo)s
WHERE id = %(id)s
"""
EMAIL_DE_OTRO_SQL = "SELECT id FROM encargados WHERE lower(email) = lower(%(email)s) AND id <> %(id)s"
TIENDA_ACTIVA_SQL = "SELECT activa FROM tiendas WHERE id = %(id)s"
REGION_ACTIVA_SQL = "SELECT activa FROM regiones WHERE id = %(id)s"
# Su correo es también por donde le llegan los avisos de lo que espera su firma; el
# anterior, si lo cambia, deja de recibirlos.
CONTACTO_SQL = """
INSERT INTO contactos_firmantes (encargado_id, canal, direccion) VALUES (%(id)s, 'email', %(email)s)
ON CONFLICT (encargado_id, canal, direccion) DO UPDATE SET baja = NULL
"""
BAJA_CONTACTOS_SQL = """
UPDATE contactos_firmantes SET baja = now()
WHERE encargado_id = %(id)s AND canal = 'email' AND direccion <> %(email)s AND baja IS NULL
"""
# Quien deja de ser regional de una región deja de firmar en sus tiendas.
QUITAR_REGION_SQL = "DELETE FROM tiendas_regionales WHERE encargado_id = %(id)s"

CAMPOS = ("nombre", "email", "rol", "tienda", "region", "administrador", "activo")


def normalizar_email(valor: Any) -> str:
    email = str(valor or "").strip()
    if not RE_EMAIL.match(email) or len(email) > 200 or "\x00" in email:
        raise DatosNoValidos(f"«{email}» no es un correo válido (p. ej. lucia.moreno@mitienda.es).")
    return email


def _persona(conexion: psycopg.Connection, persona: str) -> reglas.Persona:
    fila = conexion.execute(SELECT_PERSONA_SQL, {"id": persona}).fetchone()
    if fila is None:
        raise NoEncontrado(f"No hay ninguna persona {persona}.")
    return persona_de_fila(fila)


def _como_dict(p: reglas.Persona) -> dict[str, Any]:
    return {"id": p.id, "nombre": p.nombre, "email": p.email, "rol": p.rol, "tienda": p.tienda,
            "region": p.region, "administrador": p.administrador, "activo": p.activo}


def comprobar_datos(conexion: psycopg.Connection, p: reglas.Persona) -> None:
    """La forma de una persona: su rol, su tienda o su región (que existan y estén activas)
    y un correo que no sea de otra."""
    if p.rol not in reglas.RANGOS:
        raise NoCuadra(f"El rol {p.rol} no existe: encargado, gerente o regional.")
    if p.rol in ("encargado", "gerente") and (p.tienda is None or p.region is not None):
        raise NoCuadra(f"Un {p.rol} tiene una tienda (--tienda) y no una región.")
    if p.rol == "regional" and p.region is None and p.tienda is None and not p.administrador:
        raise NoCuadra("Un regional tiene una región (--region) o, al menos, una tienda.")
    for que, sql, valor in (("tienda", TIENDA_ACTIVA_SQL, p.tienda), ("región", REGION_ACTIVA_SQL, p.region)):
        if valor is None:
            continue
        fila = conexion.execute(sql, {"id": valor}).fetchone()
        if fila is None:
            raise NoEncontrado(f"No hay ninguna {que} {valor}.")
        if not fila["activa"]:
            raise NoCuadra(f"La {que} {valor} está desactivada.")
    if p.email and conexion.execute(EMAIL_DE_OTRO_SQL, {"email": p.email, "id": p.id}).fetchone():
        raise YaExiste(f"Ya hay otra persona con el correo {p.email}.")


def _nueva(datos: Mapping[str, Any], base: reglas.Persona | None = None) -> reglas.Persona:
    actual = _como_dict(base) if base else {"activo": True, "administrador": False}
    valores = {**actual, **{k: v for k, v in datos.items() if k in CAMPOS}}
    for campo in ("tienda", "region"):
        valores[campo] = validar_id(valores[campo], f"la {campo}") if valores.get(campo) else None
    return reglas.Persona(
        id=base.id if base else validar_id(datos.get("id"), "la persona"),
        nombre=texto(valores.get("nombre"), "el nombre de la persona"),
        email=normalizar_email(valores.get("email")), rol=str(valores.get("rol") or "").strip(),
        tienda=valores["tienda"], region=valores["region"],
        administrador=bool(valores.get("administrador")), activo=bool(valores.get("activo")),
    )


def _guardar(conexion: psycopg.Connection, quien: str, canal: str, antes: reglas.Persona | None,
             despues: reglas.Persona, accion: str) -> dict[str, Any]:
    g = gestor(conexion, quien)
    reglas.comprobar_persona(g, antes, despues, lambda t: region_de_tienda(conexion, t))
    comprobar_datos(conexion, despues)
    valores = _como_dict(despues)
    if antes is None:
        if conexion.execute(INSERT_SQL, valores).fetchone() is None:
            raise YaExiste(f"Ya hay una persona {despues.id}.")
    else:
        conexion.execute(UPDATE_SQL, valores)
        if antes.rol == "regional" and antes.region and (despues.rol != "regional" or despues.region != antes.region):
            conexion.execute(QUITAR_REGION_SQL, {"id": despues.id})
    if antes is None or antes.email != despues.email:
        conexion.execute(CONTACTO_SQL, valores)
        conexion.execute(BAJA_CONTACTOS_SQL, valores)
    sincronizar_regionales(conexion, persona=despues.id)
    anotar(conexion, quien=quien, canal=canal, objeto="persona", objeto_id=despues.id, accion=accion,
           antes=_como_dict(antes) if antes else None, despues=valores)
    return valores


def crear_persona(conexion: psycopg.Connection, quien: str, canal: str, datos: Mapping[str, Any]) -> dict[str, Any]:
    with conexion.transaction():
        reglas.comprobar_gestor_de_personas(gestor(conexion, quien))
        return _guardar(conexion, quien, canal, None, _nueva(datos), "crear")


def editar_persona(conexion: psycopg.Connection, quien: str, canal: str, persona: str,
                   cambios: Mapping[str, Any]) -> dict[str, Any]:
    with conexion.transaction():
        reglas.comprobar_gestor_de_personas(gestor(conexion, quien))
        antes = _persona(conexion, validar_id(persona, "la persona"))
        return _guardar(conexion, quien, canal, antes, _nueva(cambios, antes), "editar")


def desactivar_persona(conexion: psycopg.Connection, quien: str, canal: str, persona: str) -> dict[str, Any]:
    """Da de baja: no entra ni firma, y suelta al momento sus «lo atiendo yo»."""
    with conexion.transaction():
        reglas.comprobar_gestor_de_personas(gestor(conexion, quien))
        antes = _persona(conexion, validar_id(persona, "la persona"))
        despues = reglas.Persona(**{**_como_dict(antes), "activo": False})
        return _guardar(conexion, quien, canal, antes, despues, "desactivar")


def listar_personas(conexion: psycopg.Connection, quien: str) -> list[dict[str, Any]]:
    g = gestor(conexion, quien)
    return conexion.execute(LISTAR_SQL, {
        "todas": g.administrador, "quien": g.id, "region": g.region if g.rol == "regional" else None,
        "gerente": g.rol == "gerente", "tienda": g.tienda,
    }).fetchall()
