"""Los envoltorios ``@tool`` de cada herramienta: lo que el modelo lee y llama.

Cada herramienta saca del ``ToolRuntime`` (inyectado por LangGraph y oculto al modelo)
el cliente, el hilo, el ``tool_call_id`` y los metadatos de la ejecución
(``aprobado_por``, ``trace_id``), y llama a la función de dominio, que recibe el pool
explícitamente y se prueba sin agente. Devuelven JSON (texto) o lanzan un
``ErrorDominio`` con mensaje en español.
"""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass
from typing import Any

from langchain.tools import BaseTool, ToolRuntime, tool
from psycopg_pool import ConnectionPool

from caja.pasarela import Pasarela
from herramientas import pedidos
from herramientas.esquemas import (
    ConsultarEncargadoArgs,
    ConsultarPedidoArgs,
    ConsultarPoliticaArgs,
    StockAlternativasArgs,
)
from nucleo.contexto import contexto_de
from nucleo.puertos import FuentePolitica, Revalidador


def json_resultado(datos: Any) -> str:
    """Lo que devuelve una herramienta al modelo: JSON con los acentos tal cual."""
    return json.dumps(datos, ensure_ascii=False)


def datos_de_ejecucion(runtime: ToolRuntime, dependencias: Dependencias) -> dict[str, Any]:
    """Hilo, llamada, metadatos de la ejecución y revalidador: los argumentos comunes de
    toda función de dominio con efecto (los valida ella)."""
    config = runtime.config or {}
    metadatos = config.get("metadata") or {}
    return {
        "thread_id": (config.get("configurable") or {}).get("thread_id") or "",
        "tool_call_id": runtime.tool_call_id or "",
        "aprobado_por": metadatos.get("aprobado_por"),
        "trace_id": metadatos.get("trace_id"),
        "revalidador": dependencias.revalidador,
    }


@dataclass(frozen=True)
class Dependencias:
    """Lo que una herramienta recibe al construirse.

    ``politica``: el texto de la política para el cliente (``consultar_politica``). Vive
    en ``politicas/``, que esta capa no importa: lo pasa el ensamblaje
    (``agente.construir``, con ``politicas.PoliticaTienda``). Sin él, ``consultar_politica``
    se construye pero falla al llamarla (nunca inventa una política).

    ``revalidador``: la política que vuelve a decidir cada efecto en su transacción, bajo el
    candado del cliente (``caja.libro.exigir_veredicto_vigente``); también la pasa
    el ensamblaje.
    """

    pool: ConnectionPool
    pasarela: Pasarela
    politica: FuentePolitica | None = None
    revalidador: Revalidador | None = None


def sin_sangria(herramienta: BaseTool) -> BaseTool:
    # El docstring es la descripción que lee el modelo: sin la sangría del código.
    herramienta.description = inspect.cleandoc(herramienta.description)
    return herramienta


def crear_consultar_pedido(dependencias: Dependencias) -> BaseTool:
    pool = dependencias.pool

    @tool("consultar_pedido", args_schema=ConsultarPedidoArgs)
    def consultar_pedido(pedido: str, runtime: ToolRuntime) -> str:
        """Consulta un pedido del cliente con el que hablas: estado, fecha de compra y de entrega, días desde la entrega, importe pagado, lo ya reembolsado, y el importe que aún se puede reembolsar (`reembolsable`). Por cada línea (número de `linea`, sku, producto, categoría, unidades, precio unitario e importe pagado) dice además lo reembolsado, las unidades reembolsadas y cambiadas, las `unidades_libres` y su `reembolsable`. También da los `reembolsos` del pedido (número, importe, estado y fechas) y, en `abono`, adónde vuelve el dinero (`medio`, el de pago del pedido) y cuánto suele tardar en verse según la tienda (`plazo`).

        Úsala antes de hablar de un pedido y siempre antes de proponer un reembolso o un cambio: no supongas importes, fechas ni productos. Cada unidad se compensa una sola vez: una unidad ya reembolsada (aunque fuera en parte) o cambiada no cuenta en `unidades_libres` ni en `reembolsable`, y no se puede reembolsar ni cambiar otra vez. Los importes vienen en euros como texto ("120.00"). Si falla con «pedido no encontrado», el número no corresponde a ningún pedido de este cliente: pídele que lo revise, sin dar más detalles.

        Si el cliente pregunta cuándo le llega el dinero, contesta con `abono.plazo` y `abono.medio` (es lo típico, no una promesa). Si `abono.reembolso_en_firma` es true, el reembolso espera la firma de un encargado y aún no ha salido nada; si el último reembolso está `pendiente`, la pasarela aún no lo ha confirmado: dilo así.
        """
        return json_resultado(pedidos.consultar_pedido(pool, contexto=contexto_de(runtime), pedido=pedido))

    return sin_sangria(consultar_pedido)


def crear_consultar_politica(dependencias: Dependencias) -> BaseTool:
    fuente = dependencias.politica

    @tool("consultar_politica", args_schema=ConsultarPoliticaArgs)
    def consultar_politica(runtime: ToolRuntime) -> str:
        """Devuelve en texto la política de devoluciones y cambios de la tienda del cliente: hasta qué importe se reembolsa al momento, el plazo desde la entrega, el límite de devoluciones recientes, las reglas para cambiar un producto por otro y cuándo caduca una aprobación.

        Úsala cuando el cliente pregunte por las condiciones, o para explicarle por qué una operación necesita la aprobación de un encargado. No decide nada: quien decide es la tienda al ejecutar cada operación.
        """
        contexto = contexto_de(runtime)
        if fuente is None:
            raise RuntimeError(
                "consultar_politica sin fuente de la política: pasa Dependencias(politica=...)"
            )
        return fuente.texto_para_cliente(contexto)

    return sin_sangria(consultar_politica)


def crear_stock_alternativas(dependencias: Dependencias) -> BaseTool:
    pool = dependencias.pool

    @tool("stock_alternativas", args_schema=StockAlternativasArgs)
    def stock_alternativas(sku: str, runtime: ToolRuntime) -> str:
        """Lista los productos de la misma categoría que `sku` con stock en la tienda del cliente: sku, nombre, precio en su tienda (`pvp`), unidades y `diferencia` de precio respecto al producto original en su tienda (positiva: el cliente pagaría más; negativa: es más barato), ordenados de menor a mayor diferencia.

        Úsala cuando el cliente quiera cambiar un producto, antes de `sustituir`, y ofrécele solo productos de esta lista. Si `alternativas` está vacía, no hay cambio posible en su tienda: ofrécele el reembolso.
        """
        return json_resultado(pedidos.stock_alternativas(pool, contexto=contexto_de(runtime), sku=sku))

    return sin_sangria(stock_alternativas)


def crear_consultar_encargado(dependencias: Dependencias) -> BaseTool:
    del dependencias  # no necesita base ni pasarela

    @tool("consultar_encargado", args_schema=ConsultarEncargadoArgs)
    def consultar_encargado(pregunta: str, runtime: ToolRuntime) -> str:
        """Hace una pregunta al encargado de la tienda del cliente cuando no puedes resolver algo con las demás herramientas ni con la política: una excepción a las normas, un caso que la política no cubre o un dato que no tienes.

        La conversación queda en espera hasta que el encargado conteste; su respuesta llega como resultado de esta herramienta y debes transmitírsela al cliente con tus palabras, sin prometer nada que el encargado no haya dicho. No la uses para reembolsos o cambios normales: esas herramientas ya piden la aprobación cuando hace falta.
        """
        contexto_de(runtime)  # sin cliente no hay tienda a la que preguntar
        return pedidos.consultar_encargado(pregunta)

    return sin_sangria(consultar_encargado)
