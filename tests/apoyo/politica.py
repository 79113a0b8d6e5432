"""La política de aprobación en las pruebas: clientes de la demo, el reembolso de 120 EUR y un veredicto.

(Se llama ``politica`` y no ``politicas`` para no confundirse con el paquete del producto.)
"""

from __future__ import annotations

from herramientas import REGISTRO
from nucleo.contexto import ContextoCliente
from politicas import PoliticaAprobacion

__all__ = [
    "ANA", "BRUNO", "CARMEN", "DAVID", "ELENA", "MOTIVO_120", "REEMBOLSO_120",
    "ejecutar_sql", "nueva_politica", "veredicto",
]

ANA = ContextoCliente(cliente_id="C-0001", tienda="talavera", nombre="Ana García López")
BRUNO = ContextoCliente(cliente_id="C-0002", tienda="talavera", nombre="Bruno Díaz Martín")
CARMEN = ContextoCliente(cliente_id="C-0003", tienda="madrid-centro", nombre="Carmen Ruiz Gómez")
DAVID = ContextoCliente(cliente_id="C-0004", tienda="madrid-centro", nombre="David Fernández Gil")
ELENA = ContextoCliente(cliente_id="C-0005", tienda="talavera", nombre="Elena Navarro Ramos")

REEMBOLSO_120 = {"pedido": "P-20260917-0041", "importe": "120.00", "motivo": "La cafetera no calienta"}
MOTIVO_120 = "importe 120,00 EUR supera el límite de 60,00 EUR de la tienda"


def nueva_politica(pool) -> PoliticaAprobacion:
    """La política como la ensambla agente.construir: reglas del registro."""
    return PoliticaAprobacion(pool=pool, reglas=REGISTRO.reglas())


def veredicto(politica, nombre, args, contexto, *, id="call-1", hilo="t1"):
    return politica.evaluar(
        thread_id=hilo, tool_call_id=id, herramienta=nombre, args=args, contexto=contexto
    )


def ejecutar_sql(pool, sentencia: str, parametros: dict | None = None) -> None:
    with pool.connection() as c:
        c.execute(sentencia, parametros or {})
