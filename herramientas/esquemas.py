"""Argumentos de las herramientas tal como los ve el modelo.

Las descripciones son lo único que el modelo lee de cada argumento: dicen qué poner,
en qué formato y de dónde sacarlo. El cliente nunca es un argumento: sale del contexto.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any

from langchain_core.tools import InjectedToolArg
from pydantic import BaseModel, BeforeValidator, Field, WithJsonSchema


def _importe_sin_float(valor: Any) -> Any:
    # Un float JSON (24.9) pasa por su repr más corto: Decimal("24.9"), no 24.899999...
    if isinstance(valor, float):
        return str(valor)
    return valor


# Para el modelo es un número; dentro, un Decimal. Los céntimos y el signo los valida el
# dominio (ImporteNoValido, con un mensaje en español que dice el máximo).
Importe = Annotated[
    Decimal,
    BeforeValidator(_importe_sin_float),
    WithJsonSchema({"type": "number", "exclusiveMinimum": 0}),
]

DESCRIPCION_PEDIDO = (
    "Número de pedido con el formato P-AAAAMMDD-NNNN, por ejemplo P-20260917-0041, tal como "
    "lo da el cliente o aparece en una respuesta anterior. No lo inventes: si el cliente no "
    "lo sabe, pídeselo."
)


class ConsultarPedidoArgs(BaseModel):
    """Argumentos de consultar_pedido."""

    pedido: str = Field(description=DESCRIPCION_PEDIDO)


class ConsultarPoliticaArgs(BaseModel):
    """consultar_politica no lleva argumentos: la tienda es la del cliente."""

    # Trampa de langchain-core: con un args_schema sin campos, la herramienta se llama sin
    # argumentos y se pierde el ToolRuntime inyectado. Este campo lo mantiene; al ser
    # InjectedToolArg no aparece en el esquema que ve el modelo.
    runtime: Annotated[Any, InjectedToolArg] = Field(default=None, exclude=True)


class StockAlternativasArgs(BaseModel):
    """Argumentos de stock_alternativas."""

    sku: str = Field(
        description=(
            "Código (SKU) del producto que el cliente quiere cambiar, por ejemplo CAF-001. "
            "Cópialo del campo `sku` de una línea de `consultar_pedido`."
        )
    )


class ConsultarEncargadoArgs(BaseModel):
    """Argumentos de consultar_encargado."""

    pregunta: str = Field(
        min_length=1,
        max_length=1000,
        description=(
            "La pregunta para el encargado de la tienda, en español, completa y que se entienda "
            "sola: número de pedido si lo hay, qué pide el cliente y qué dato o permiso te falta. "
            "No incluyas datos personales que no hagan falta para responder."
        ),
    )
