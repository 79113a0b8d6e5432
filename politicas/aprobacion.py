"""Política de aprobación: qué llamadas a herramientas necesitan la firma del encargado.

``PoliticaAprobacion.necesita_encargado`` es el ``when`` de ``InterruptOnConfig`` en el
``HumanInTheLoopMiddleware`` de LangChain (modo ``batched``). Decide con las tablas de
negocio (pedidos, devoluciones, productos, politicas_tienda), nunca con el prompt ni con
el estado del agente, y con la regla que el registro asigna a la herramienta.

Contrato:

- Devuelve siempre un ``bool`` de verdad. El middleware trata ``None`` (y cualquier
  valor falso) como "no interrumpir": la herramienta se ejecutaría sin revisión.
- Veredicto estable: el primero de cada ``(thread_id, tool_call_id)`` se guarda en
  ``evaluaciones_politica`` y toda evaluación posterior devuelve el guardado, aunque los
  datos hayan cambiado. Trampa: LangChain vuelve a llamar a ``when`` al reanudar; si
  entonces dijera ``False`` (la ventana de 30 días se desplazó, el encargado subió el
  límite...), el middleware se saltaría la decisión del encargado, incluso un rechazo,
  y ejecutaría la herramienta.
- Lo que decide dinero se fija aquí: con el veredicto se guarda la instantánea de todos
  los valores de la política de la tienda (``valores``, con su ``version``), leídos en la
  misma sentencia que los hechos. La herramienta se ejecuta con la instantánea de su
  ``tool_call_id`` (p. ej. ``diferencia_minima_liquidable`` en ``sustituir``), nunca con la
  tabla viva: un cambio de política entre la pausa y la firma no cambia lo que se paga.
- Sentencias: una para un veredicto guardado (la consulta de hechos lo devuelve); dos
  para uno nuevo (hechos + INSERT); una más solo si otra sesión guardó la misma llamada
  a la vez. Las reglas deciden en Python (``politicas.reglas``).
- Fallar cerrado: una herramienta que no está en ``reglas`` o cuya regla no existe pide
  firma; datos que no cuadran (pedido ajeno o inexistente, SKU desconocido, importe no
  válido) piden firma con el motivo (la herramienta lo rechazará igualmente al
  ejecutarse). Sin contexto del cliente (``runtime.context is None``, p. ej. una
  reanudación sin ``context=``) se lanza ``ContextoAusente``; un error de base de datos
  se propaga. Las dos cosas paran la ejecución sin que corra ninguna herramienta.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Mapping
from contextlib import nullcontext
from dataclasses import replace
from types import MappingProxyType, SimpleNamespace
from typing import TYPE_CHECKING, Any

from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from nucleo.claves_candado import CANDADO_CLIENTE_SQL
from nucleo.contexto import ContextoCliente, contexto_de
from nucleo.errores import ContextoAusente
from nucleo.puertos import CLAVE_EN_REVISION
from politicas.autoridad import autoridad_requerida
from politicas.defectos import instantanea
from politicas.hechos import SELECT_EN_REVISION_SQL, consulta_de_hechos
from politicas.lectura_matriz import matriz_de_json
from politicas.reglas import REGLAS, Dictamen, Regla
from politicas.revalidacion import elevar_veredicto, parametros_de_hechos, revalidar_llamada
from politicas.veredicto import (
    SELECT_EVALUACION_SQL,
    Veredicto,
    leer_veredicto,
    veredicto_de_fila,
)

if TYPE_CHECKING:
    import psycopg
    from langgraph.prebuilt.tool_node import ToolCallRequest
    from psycopg_pool import ConnectionPool

__all__ = ["PoliticaAprobacion", "hilo_de"]

logger = logging.getLogger(__name__)

INSERT_EVALUACION_SQL = """
INSERT INTO evaluaciones_politica
    (thread_id, tool_call_id, herramienta, args, tienda, cliente_id, requiere_encargado,
     motivos, umbrales, version_politica, autoridad_importe, autoridad_firmas, autoridad_rol,
     autoridad_matriz_id, autoridad_regla, valores)
VALUES (%(thread_id)s, %(tool_call_id)s, %(herramienta)s, %(args)s, %(tienda)s,
        %(cliente_id)s, %(requiere_encargado)s, %(motivos)s, %(umbrales)s,
        %(version_politica)s, %(autoridad_importe)s, %(autoridad_firmas)s, %(autoridad_rol)s,
        %(autoridad_matriz_id)s, %(autoridad_regla)s, %(valores)s)
ON CONFLICT (thread_id, tool_call_id) DO NOTHING
RETURNING requiere_encargado, motivos, umbrales, herramienta, version_politica,
          autoridad_importe, autoridad_firmas, autoridad_rol, autoridad_matriz_id,
          autoridad_regla, true AS nueva
"""

_SIN_REGLA_SQL = consulta_de_hechos(()).sql  # solo el veredicto previo y la tienda


def hilo_de(runtime: Any) -> str:
    """El ``thread_id`` de la ejecución.

    ``ToolRuntime.config`` (lo que recibe ``when``) es el RunnableConfig; el ``Runtime``
    del grafo (lo que recibe la descripción) no tiene config, pero sí
    ``execution_info.thread_id``; como último recurso, ``get_config()``.
    """
    config = getattr(runtime, "config", None)
    hilo = ((config or {}).get("configurable") or {}).get("thread_id")
    if not hilo:
        hilo = getattr(getattr(runtime, "execution_info", None), "thread_id", None)
    if not hilo:
        from langgraph.config import get_config

        try:
            hilo = (get_config().get("configurable") or {}).get("thread_id")
        except RuntimeError:  # fuera de una ejecución del grafo
            hilo = None
    if not hilo:
        raise ContextoAusente(
            "falta el thread_id de la ejecución (config['configurable']['thread_id']): "
            "sin él no se puede guardar un veredicto estable"
        )
    return str(hilo)


def _json(valor: Any) -> str:
    return json.dumps(valor, ensure_ascii=False, default=str)


def _sin_segunda_tarjeta(cur: Any, dictamen: Dictamen, parametros: Mapping[str, Any]) -> Dictamen:
    """Bajo el candado del cliente y en una lectura nueva: si otra conversación acaba de pedir
    firma por las mismas unidades, esta no abre otra tarjeta (``CLAVE_EN_REVISION``)."""
    cur.execute(CANDADO_CLIENTE_SQL, {"cliente_id": parametros["cliente_id"]})
    otra = cur.execute(SELECT_EN_REVISION_SQL, parametros).fetchone()
    if otra is None:
        return dictamen
    return Dictamen(motivos=(), umbrales={**dictamen.umbrales, CLAVE_EN_REVISION: otra["thread_id"]},
                    importe=dictamen.importe)


def _sin_regla(herramienta: str) -> Dictamen:
    return Dictamen(motivos=(f"herramienta sin regla de aprobación: {herramienta or '(sin nombre)'}",))


class PoliticaAprobacion:
    """Decide si una llamada necesita al encargado y guarda el veredicto.

    Uso (en ``agente.construir``)::

        politica = PoliticaAprobacion(pool=pool, reglas=REGISTRO.reglas())
        InterruptOnConfig(allowed_decisions=[...], when=politica.necesita_encargado, ...)

    - ``pool``: un ``psycopg_pool.ConnectionPool`` síncrono (el middleware llama a
      ``when`` de forma síncrona incluso con ``ainvoke``) con conexiones en autocommit.
    - ``reglas``: ``herramienta -> nombre de regla`` (``Registro.reglas()``); ``None``
      = herramienta sin firma, nunca la pide y no toca la base. Una herramienta ausente
      o con una regla que no está en ``catalogo`` pide firma siempre.
    - ``catalogo``: las reglas por nombre (``politicas.reglas.REGLAS``).
    """

    def __init__(
        self,
        *,
        pool: ConnectionPool,
        reglas: Mapping[str, str | None],
        catalogo: Mapping[str, Regla] = REGLAS,
        recordados: int = 4096,
    ) -> None:
        if not isinstance(reglas, Mapping):
            raise TypeError("reglas debe ser un Mapping herramienta -> regla (Registro.reglas())")
        if recordados < 0:
            raise ValueError("recordados no puede ser negativo")
        self._pool = pool
        self._reglas: Mapping[str, str | None] = MappingProxyType(dict(reglas))
        self._catalogo = catalogo
        for herramienta, regla in self._reglas.items():
            if regla is not None and regla not in catalogo:
                logger.warning(
                    "la herramienta %s usa la regla %r, que no existe: pedirá firma siempre",
                    herramienta, regla,
                )
        # El veredicto guardado no cambia nunca: se recuerda en el proceso para que la
        # descripción (justo después del ``when``) y la reevaluación al reanudar en este
        # mismo proceso no vuelvan a la base.
        self._recordados: OrderedDict[tuple[str, str], Veredicto] = OrderedDict()
        self._max_recordados = recordados
        self._cerrojo = threading.Lock()

    def regla_de(self, herramienta: str) -> str | None:
        """El nombre de la regla de ``herramienta`` si existe en el catálogo; si no, None."""
        regla = self._reglas.get(herramienta)
        return regla if regla in self._catalogo else None

    def _sin_firma(self, herramienta: str) -> bool:
        return herramienta in self._reglas and self._reglas[herramienta] is None

    def necesita_encargado(self, req: ToolCallRequest) -> bool:
        """El ``when`` del middleware: True si la llamada espera la firma del encargado.

        ``req`` es el ``ToolCallRequest`` que arma el middleware en ``after_model``
        (``tool=None``; ``req.runtime.context`` es el ``ContextoCliente``;
        ``req.runtime.config`` el RunnableConfig con el thread_id). Se vuelve a llamar
        al reanudar: por eso devuelve el veredicto guardado de ese ``tool_call_id``.
        Devuelve un ``bool`` real (``None`` equivaldría a "no interrumpir").

        Raises:
            ContextoAusente: sin contexto del cliente o sin thread_id.
            psycopg.Error, psycopg_pool.PoolTimeout...: cualquier fallo de la base.
        """
        llamada = req.tool_call
        herramienta = llamada.get("name") or ""
        if self._sin_firma(herramienta):
            return False
        veredicto = self.evaluar(
            thread_id=hilo_de(req.runtime),
            tool_call_id=llamada.get("id"),
            herramienta=herramienta,
            args=llamada.get("args"),
            contexto=contexto_de(req.runtime),
        )
        return veredicto.requiere_encargado is True

    def evaluar(
        self,
        *,
        thread_id: str,
        tool_call_id: str | None,
        herramienta: str,
        args: Mapping[str, Any] | None,
        contexto: ContextoCliente | Mapping[str, Any] | None,
    ) -> Veredicto:
        """El veredicto de una llamada: el guardado si existe; si no, lo calcula y guarda.

        Las herramientas sin firma devuelven ``requiere_encargado=False`` sin tocar la base.
        """
        if self._sin_firma(herramienta):
            return Veredicto(requiere_encargado=False, motivos=(), herramienta=herramienta)
        # Mismo criterio y mensaje que las herramientas (None -> ContextoAusente, dict -> ok).
        contexto = contexto_de(SimpleNamespace(context=contexto))
        if not thread_id:
            raise ContextoAusente("falta el thread_id de la ejecución")
        if not tool_call_id:
            raise ValueError(f"la llamada a {herramienta!r} no tiene tool_call_id")
        with self._cerrojo:
            recordado = self._recordados.get((thread_id, tool_call_id))
        if recordado is not None and recordado.herramienta == herramienta:
            return replace(recordado, nuevo=False)
        veredicto = self._consultar(thread_id, tool_call_id, herramienta, dict(args or {}), contexto)
        if veredicto.herramienta != herramienta:
            # La misma clave con otra herramienta no debería existir; ante la duda, firma.
            logger.warning(
                "tool_call_id %s evaluado antes para %s y ahora para %s",
                tool_call_id, veredicto.herramienta, herramienta,
            )
            veredicto = replace(
                veredicto,
                requiere_encargado=True,
                motivos=(*veredicto.motivos, "la llamada no coincide con la evaluada antes"),
                herramienta=herramienta,
                nuevo=False,
            )
        logger.debug(
            "veredicto %s/%s %s: %s %s", thread_id, tool_call_id, herramienta,
            veredicto.requiere_encargado, list(veredicto.motivos),
        )
        with self._cerrojo:
            self._recordados[(thread_id, tool_call_id)] = veredicto
            while len(self._recordados) > self._max_recordados:
                self._recordados.popitem(last=False)
        return veredicto

    def _consultar(
        self,
        thread_id: str,
        tool_call_id: str,
        herramienta: str,
        args: dict[str, Any],
        contexto: ContextoCliente,
    ) -> Veredicto:
        regla = self._catalogo.get(self._reglas.get(herramienta) or "")
        clave = {"thread_id": thread_id, "tool_call_id": tool_call_id}
        parametros = parametros_de_hechos(
            regla, args, thread_id=thread_id, tool_call_id=tool_call_id, herramienta=herramienta,
            tienda=contexto.tienda, cliente_id=contexto.cliente_id,
        )
        with self._pool.connection() as conexion, conexion.cursor(row_factory=dict_row) as cur:
            hechos = cur.execute(regla.consulta if regla else _SIN_REGLA_SQL, parametros).fetchone()
            if hechos["herramienta"] is not None:
                return veredicto_de_fila(hechos)  # ya guardado: no se calculó ningún hecho
            dictamen = regla.decidir(hechos, args) if regla else _sin_regla(herramienta)
            # Una pausa por unidades reserva esas unidades: se guarda bajo el candado del cliente.
            reserva = bool(dictamen.motivos) and regla is not None and "en_revision" in regla.hechos
            with conexion.transaction() if reserva else nullcontext():
                if reserva:
                    dictamen = _sin_segunda_tarjeta(cur, dictamen, parametros)
                datos_matriz = hechos.get("matriz_autoridad")
                matriz = matriz_de_json(datos_matriz) if datos_matriz else None
                autoridad = autoridad_requerida(dictamen, matriz, self._reglas.get(herramienta))
                fila = self._insertar(cur, clave, herramienta, args, contexto, dictamen, autoridad, hechos)
        if fila is None:
            raise RuntimeError(
                f"veredicto de {thread_id}/{tool_call_id} ni guardado ni legible tras la carrera"
            )
        return veredicto_de_fila(fila)

    @staticmethod
    def _insertar(cur, clave, herramienta, args, contexto, dictamen, autoridad, hechos) -> dict | None:
        fila = cur.execute(
            INSERT_EVALUACION_SQL,
            {
                **clave,
                "herramienta": herramienta,
                "args": Jsonb(args, dumps=_json),
                "tienda": contexto.tienda,
                "cliente_id": contexto.cliente_id,
                "requiere_encargado": bool(dictamen.motivos),
                "motivos": Jsonb(list(dictamen.motivos)),
                "umbrales": Jsonb(dict(dictamen.umbrales), dumps=_json),
                "version_politica": hechos["version"],
                "autoridad_importe": autoridad.importe if autoridad else None,
                "autoridad_firmas": autoridad.firmas if autoridad else None,
                "autoridad_rol": autoridad.rol_minimo if autoridad else None,
                "autoridad_matriz_id": autoridad.matriz_id if autoridad else None,
                "autoridad_regla": autoridad.regla if autoridad else None,
                "valores": Jsonb(instantanea(hechos)),
            },
        ).fetchone()
        if fila is None:
            # Carrera: otra sesión insertó la misma clave entre nuestra lectura y el
            # INSERT (ON CONFLICT esperó a su commit); su veredicto es el que vale.
            fila = cur.execute(SELECT_EVALUACION_SQL, clave).fetchone()
        return fila

    def revalidar(
        self, conexion: psycopg.Connection, *, thread_id: str, tool_call_id: str, cliente_id: str
    ) -> None:
        """El ``Revalidador`` de las herramientas (``nucleo.puertos``): decide otra vez
        la llamada en la transacción de su efecto, bajo el candado del cliente
        (``politicas.revalidacion``). ``NecesitaFirma`` si ya no sale sin firma."""
        revalidar_llamada(
            conexion,
            regla_de=lambda herramienta: self._catalogo.get(self._reglas.get(herramienta) or ""),
            regla_de_matriz=self._reglas.get,
            thread_id=thread_id, tool_call_id=tool_call_id, cliente_id=cliente_id,
        )

    def elevar(self, *, thread_id: str, tool_call_id: str, revalidacion: Any) -> Veredicto:
        """Guarda el veredicto «pide firma» de una llamada que la revalidación paró y lo
        devuelve (también lo recuerda: la descripción de la pausa lo lee justo después)."""
        with self._pool.connection() as conexion:
            elevar_veredicto(conexion, thread_id=thread_id, tool_call_id=tool_call_id,
                             revalidacion=revalidacion)
            veredicto = leer_veredicto(conexion, thread_id=thread_id, tool_call_id=tool_call_id)
        if veredicto is None:
            raise RuntimeError(f"veredicto de {thread_id}/{tool_call_id} desaparecido al elevarlo")
        with self._cerrojo:
            self._recordados[(thread_id, tool_call_id)] = veredicto
        return veredicto

    def revalidada(self, *, thread_id: str, tool_call_id: str) -> bool:
        """Si la revalidación elevó el veredicto de la llamada (su pausa sale de la herramienta).

        Sin ir a la base si este proceso recuerda el veredicto «sin firma» del ``when``."""
        with self._cerrojo:
            recordado = self._recordados.get((thread_id, tool_call_id))
        if recordado is not None and (recordado.revalidada or not recordado.requiere_encargado):
            return recordado.revalidada
        veredicto = self.veredicto_guardado(thread_id=thread_id, tool_call_id=tool_call_id)
        return bool(veredicto and veredicto.revalidada)

    def veredicto_guardado(self, *, thread_id: str, tool_call_id: str) -> Veredicto | None:
        """El veredicto guardado (motivos, umbrales, autoridad) de una llamada, o None."""
        with self._pool.connection() as conexion:
            return leer_veredicto(conexion, thread_id=thread_id, tool_call_id=tool_call_id)
