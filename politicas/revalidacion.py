"""Decidir y consumir a la vez: un veredicto «sin firma» vale solo si sigue valiendo al escribir.

El ``when`` del middleware decide con los hechos de un momento; entre ese momento y el
``COMMIT`` del efecto, otra conversación del mismo cliente puede dar un vale, reenviar la
línea o devolver algo. Por eso cada efecto, en su transacción, con el pedido ya bloqueado:

1. toma el candado del cliente (``CANDADO_CLIENTE``, de transacción: lo suelta el
   ``COMMIT``), que serializa los efectos de todas sus conversaciones, en la misma
   sentencia que lee el veredicto guardado de la llamada. Orden de candados: pedido,
   cliente y después lo compartido (stock); quien bloquea algo compartido antes del
   cliente se interbloquea con otra conversación del mismo cliente (docs/libro.md,
   «Historias concurrentes»);
2. vuelve a leer los hechos de la regla en una sentencia nueva (en READ COMMITTED cada
   sentencia ve lo confirmado antes de empezar: tras esperar al candado, lo del efecto
   anterior). Trampa: no vale una subconsulta de la sentencia que espera, que usaría la
   foto de antes de la espera (docs/trampas.md);
3. decide otra vez. Si ahora pide firma, ``NecesitaFirma`` con el veredicto nuevo: la
   transacción se deshace y el middleware ``RevalidacionEfectos`` lo guarda
   (``elevar_veredicto``) y pausa como cualquier otra firma.

Una llamada cuyo veredicto ya pedía firma no se revalida: la firmó quien podía (la
autoridad se fijó al pausar). Lo imposible lo rechaza la propia herramienta con su error.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from nucleo.claves_candado import CANDADO_CLIENTE
from nucleo.errores import ErrorDominio, NecesitaFirma
from nucleo.puertos import CLAVE_EN_REVISION, CLAVE_IMPOSIBLE, texto_en_revision
from politicas.autoridad import Autoridad, autoridad_requerida
from politicas.defectos import instantanea, parametros_defecto
from politicas.lectura_matriz import matriz_de_json
from politicas.reglas import Regla
from politicas.reglas.base import texto_de

__all__ = [
    "ELEVAR_VEREDICTO_SQL",
    "Revalidacion",
    "elevar_veredicto",
    "parametros_de_hechos",
    "revalidar_llamada",
]

# El candado del cliente y el veredicto de la llamada en una sentencia: el veredicto es de
# esta llamada (lo escribió su ``when`` antes) y no lo cambia quien espera el candado, así
# que la foto de antes de la espera vale. Los hechos, no: van en la sentencia siguiente.
BLOQUEAR_Y_LEER_VEREDICTO_SQL = sql.SQL("""
SELECT {candado} AS candado, e.herramienta, e.args, e.tienda, e.cliente_id,
       e.requiere_encargado, e.umbrales
FROM (VALUES (1)) AS una (fila)
LEFT JOIN evaluaciones_politica e
       ON e.thread_id = %(thread_id)s AND e.tool_call_id = %(tool_call_id)s
""").format(candado=sql.SQL(CANDADO_CLIENTE)).as_string()

# Solo un veredicto «sin firma» se eleva (una vez): uno que ya pedía firma no se toca.
ELEVAR_VEREDICTO_SQL = """
UPDATE evaluaciones_politica
SET requiere_encargado = true, motivos = %(motivos)s, umbrales = %(umbrales)s,
    version_politica = %(version_politica)s, autoridad_importe = %(autoridad_importe)s,
    autoridad_firmas = %(autoridad_firmas)s, autoridad_rol = %(autoridad_rol)s,
    autoridad_matriz_id = %(autoridad_matriz_id)s, autoridad_regla = %(autoridad_regla)s,
    valores = %(valores)s, revalidada = now()
WHERE thread_id = %(thread_id)s AND tool_call_id = %(tool_call_id)s AND NOT requiere_encargado
"""


def _json(valor: Any) -> str:
    return json.dumps(valor, ensure_ascii=False, default=str)


@dataclass(frozen=True)
class Revalidacion:
    """El veredicto nuevo de una llamada que al ejecutarse ya no salía sin firma."""

    herramienta: str
    motivos: tuple[str, ...]
    umbrales: Mapping[str, Any] = field(default_factory=dict)
    version_politica: int = 0
    autoridad: Autoridad | None = None
    valores: Mapping[str, Any] = field(default_factory=dict)


def parametros_de_hechos(
    regla: Regla | None, args: Mapping[str, Any], *, thread_id: str, tool_call_id: str,
    herramienta: str, tienda: str, cliente_id: str,
) -> dict[str, Any]:
    """Los parámetros de la consulta de hechos de ``regla`` para una llamada."""
    return {
        **parametros_defecto(),
        **(regla.parametros(args) if regla else {}),
        "thread_id": thread_id,
        "tool_call_id": tool_call_id,
        "herramienta": herramienta,
        "args": Jsonb(dict(args), dumps=_json),
        "tienda": tienda,
        "cliente_id": cliente_id,
        "pedido": texto_de(args.get("pedido")),
    }


def revalidar_llamada(
    conexion: psycopg.Connection,
    *,
    regla_de: Callable[[str], Regla | None],
    regla_de_matriz: Callable[[str], str | None],
    thread_id: str,
    tool_call_id: str,
    cliente_id: str,
) -> None:
    """Toma el candado del cliente y decide otra vez la llamada (ver el módulo).

    Raises:
        NecesitaFirma: con los hechos de ahora la regla pide firma (``revalidacion``).
        ErrorDominio: otra conversación espera ya la firma por las mismas unidades, o la
            regla ve ahora imposible lo que la herramienta dejó pasar (no se escribe nada).
    """
    clave = {"thread_id": thread_id, "tool_call_id": tool_call_id}
    with conexion.cursor(row_factory=dict_row) as cur:
        fila = cur.execute(BLOQUEAR_Y_LEER_VEREDICTO_SQL, {**clave, "cliente_id": cliente_id}).fetchone()
        if fila["herramienta"] is None or fila["requiere_encargado"] or CLAVE_IMPOSIBLE in (fila["umbrales"] or {}):
            return
        herramienta = fila["herramienta"]
        regla = regla_de(herramienta)
        if regla is None:
            return
        args = dict(fila["args"] or {})
        # Una sentencia nueva, después del candado: ve lo que confirmó el efecto anterior.
        hechos = cur.execute(regla.consulta_revalidacion, parametros_de_hechos(
            regla, args, thread_id=thread_id, tool_call_id=tool_call_id, herramienta=herramienta,
            tienda=fila["tienda"], cliente_id=fila["cliente_id"],
        )).fetchone()
    dictamen = regla.decidir(hechos, args)
    if dictamen.umbrales.get(CLAVE_EN_REVISION):
        raise ErrorDominio(texto_en_revision(args.get("pedido")), pedido=args.get("pedido"))
    if dictamen.umbrales.get(CLAVE_IMPOSIBLE):
        razon = dictamen.umbrales[CLAVE_IMPOSIBLE]
        raise ErrorDominio(
            f"los datos del pedido han cambiado mientras se preparaba la operación ({razon}); no se "
            "ha hecho nada. Consulta el pedido otra vez antes de proponer nada", razon=razon)
    if not dictamen.motivos:
        return
    datos_matriz = hechos.get("matriz_autoridad")
    matriz = matriz_de_json(datos_matriz) if datos_matriz else None
    raise NecesitaFirma(dictamen.motivos, revalidacion=Revalidacion(
        herramienta=herramienta,
        motivos=dictamen.motivos,
        umbrales=dict(dictamen.umbrales),
        version_politica=hechos["version"],
        autoridad=autoridad_requerida(dictamen, matriz, regla_de_matriz(herramienta)),
        valores=instantanea(hechos),
    ))


def elevar_veredicto(
    conexion: psycopg.Connection, *, thread_id: str, tool_call_id: str, revalidacion: Revalidacion
) -> None:
    """Guarda el veredicto nuevo («pide firma») de una llamada que la revalidación paró."""
    autoridad = revalidacion.autoridad
    conexion.execute(ELEVAR_VEREDICTO_SQL, {
        "thread_id": thread_id,
        "tool_call_id": tool_call_id,
        "motivos": Jsonb(list(revalidacion.motivos)),
        "umbrales": Jsonb(dict(revalidacion.umbrales), dumps=_json),
        "version_politica": revalidacion.version_politica,
        "autoridad_importe": autoridad.importe if autoridad else None,
        "autoridad_firmas": autoridad.firmas if autoridad else None,
        "autoridad_rol": autoridad.rol_minimo if autoridad else None,
        "autoridad_matriz_id": autoridad.matriz_id if autoridad else None,
        "autoridad_regla": autoridad.regla if autoridad else None,
        "valores": Jsonb(dict(revalidacion.valores), dumps=_json),
    })
