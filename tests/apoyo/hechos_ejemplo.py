"""Hechos de ejemplo para cada regla de la política: combinaciones que encienden sus motivos.

``casos_de_reglas()`` recorre cada regla de ``politicas.reglas.REGLAS`` con hechos
generados (pedido que existe o no, cada estado, dentro y fuera de plazo, compensaciones,
rechazos y vales previos, importes por encima de cada límite) y argumentos buenos y malos;
da ``(regla, texto)`` de cada motivo y de cada razón de «imposible». Un hecho que una regla
lee y que aquí no tiene ejemplo hace fallar la prueba (``KeyError``): añádelo a ``_FIJOS``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from politicas import DEFECTOS, REGLAS
from politicas.reglas.base import CLAVE_IMPOSIBLE

__all__ = ["casos_de_reglas"]

D = Decimal
_AHORA = datetime(2026, 12, 1, tzinfo=UTC)
_LINEA = {"sku": "CAF-001", "nombre": "Cafetera de goteo Aroma 10 tazas", "precio": "80.00", "unidades": 2,
          "libres": 2, "reenviadas": 1, "reenvios": 2, "stock": 0, "vales": 1}
_FIJOS = {
    "importe_pedido": D("900.00"), "importe_linea_vale": D("80.00"), "vales_cliente_recientes": 2,
    "compensaciones_linea_vale": 1, "devoluciones_recientes": 5, "dias_entregado": 90, "dias_enviado": 10,
    "sku_original_en_pedido": True, "pvp_original": D("120.00"), "pvp_nuevo": D("249.00"),
    "nombre_original": "Cafetera de goteo Aroma 10 tazas", "nombre_nuevo": "Cafetera superautomática Barista",
    "libres_sku_original": 1, "direccion_envio": {"calle": "Calle Mayor 1", "codigo_postal": "45600",
                                                  "localidad": "Talavera de la Reina", "provincia": "Toledo"},
}
_ELEGIBILIDADES = [
    None,
    {"entregado": True, "estado": "entregado", "dias_desde_entrega": 3, "ventana_dias": 30,
     "dentro_de_ventana": True, "reembolsos": 0, "sustituciones": 0, "unidades_libres": 2},
    {"entregado": True, "estado": "entregado", "dias_desde_entrega": 90, "ventana_dias": 30,
     "dentro_de_ventana": False, "reembolsos": 1, "sustituciones": 2, "unidades_libres": 1},
    {"entregado": False, "estado": "enviado", "dias_desde_entrega": None, "ventana_dias": 30,
     "dentro_de_ventana": False, "reembolsos": 0, "sustituciones": 0, "unidades_libres": 2},
    {"entregado": True, "estado": "entregado", "dias_desde_entrega": 3, "ventana_dias": 30,
     "dentro_de_ventana": True, "reembolsos": 2, "sustituciones": 0, "unidades_libres": 0},
]
_ARGS = [
    {"pedido": "P-20260917-0041", "importe": "500.00", "sku_original": "CAF-001", "sku_nuevo": "CAF-004",
     "linea": 1, "unidades": 1, "motivo": "no_llego", "calle": "Gran Vía 1", "codigo_postal": "28013",
     "localidad": "Madrid"},
    {"pedido": "P-20260917-0041", "importe": "5.00", "sku_original": "CAF-001", "sku_nuevo": "CAF-002",
     "linea": 7, "unidades": 5, "motivo": "llego_roto", "calle": "Calle Mayor 2", "codigo_postal": "45600",
     "localidad": "Talavera de la Reina"},
    {"pedido": "P-20260917-0041", "importe": "abc", "linea": "x", "unidades": 0, "motivo": "otro",
     "codigo_postal": "99"},
]


def _hechos() -> Iterator[dict]:
    for existe, estado, eleg, rechazadas, vales, linea in itertools.product(
            (True, False), ("pendiente", "enviado", "entregado", "cancelado"), _ELEGIBILIDADES, (0, 1, 3),
            (0, 2), (_LINEA, {**_LINEA, "libres": 0, "stock": 4, "reenvios": 1, "vales": 0}, None)):
        entregado = _AHORA - timedelta(days=90) if estado == "entregado" else None
        enviado = _AHORA - timedelta(days=10) if estado in ("enviado", "entregado") else None
        yield {**DEFECTOS, **_FIJOS, "pedido_existe": existe, "estado_pedido": estado if existe else None,
               "entregado_en": entregado, "enviado_en": enviado, "elegibilidad": eleg,
               "rechazadas_pedido": rechazadas, "vales_pedido": vales, "linea_reenvio": linea,
               "en_revision": None, "limite_reembolso": D("60.00")}


def casos_de_reglas() -> Iterator[tuple[str, str]]:
    """(regla, texto) de cada motivo y razón de «imposible» distintos de cada regla."""
    vistos: set[tuple[str, str]] = set()
    for nombre, regla in REGLAS.items():
        for hechos, args in itertools.product(_hechos(), _ARGS):
            dictamen = regla.decidir(hechos, args)
            textos = [*dictamen.motivos]
            if dictamen.umbrales.get(CLAVE_IMPOSIBLE):
                textos.append(dictamen.umbrales[CLAVE_IMPOSIBLE])
            for texto in textos:
                if (nombre, texto) not in vistos:
                    vistos.add((nombre, texto))
                    yield nombre, texto
