"""Los pedidos de la demo, cada uno para un caso (reembolso con o sin firma, cancelación,
vale, reenvío...), y las devoluciones históricas. Las fechas son días hacia atrás desde hoy,
para que la demo no caduque."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

D = Decimal


@dataclass(frozen=True)
class PedidoDemo:
    id: str
    cliente_id: str
    dias_desde_compra: int
    estado: str
    dias_desde_entrega: int | None
    lineas: tuple[tuple[str, int], ...]  # (sku, unidades); precio = pvp de la tienda


PEDIDOS_CLAVE = [
    # 120 EUR, cafetera, entregado hace 4 días: reembolso necesita encargado (importe).
    PedidoDemo("P-20260917-0041", "C-0001", 9, "entregado", 4, (("CAF-001", 1),)),
    # 24,90 EUR entregado hace 3 días, cliente sin devoluciones: reembolso sin firma.
    PedidoDemo("P-20260920-0102", "C-0002", 7, "entregado", 3, (("MEN-001", 1),)),
    # 35 EUR entregado hace 45 días: necesita encargado (antigüedad de la entrega).
    PedidoDemo("P-20260801-0007", "C-0003", 50, "entregado", 45, (("TEX-002", 1),)),
    # 40 EUR aún no entregado.
    PedidoDemo("P-20260925-0150", "C-0004", 2, "enviado", None, (("ILU-001", 1),)),
    # 30 EUR entregado hace 5 días, cliente con 2 devoluciones en 30 días.
    PedidoDemo("P-20260922-0077", "C-0005", 8, "entregado", 5, (("ELE-001", 1),)),
    # Jarra de repuesto: sin alternativa en stock en su categoría.
    PedidoDemo("P-20260919-0055", "C-0001", 6, "entregado", 2, (("REP-001", 1),)),
    # 350 EUR entregado hace 2 días: el reembolso supera los 300 EUR del encargado (gerente).
    PedidoDemo(
        "P-20261005-0350", "C-0009", 6, "entregado", 2,
        (("CAF-004", 1), ("TEX-004", 1), ("ILU-002", 1), ("TEX-005", 1)),
    ),
    # 650 EUR entregado hace 3 días: más de 500 EUR, dos firmas (una de gerente o regional).
    PedidoDemo(
        "P-20261006-0650", "C-0006", 7, "entregado", 3,
        (("CAF-004", 2), ("CAF-005", 1), ("TEX-004", 1), ("TEX-005", 2)),
    ),
]

PEDIDOS_RELLENO = [
    PedidoDemo("P-20260901-0011", "C-0005", 28, "entregado", 25, (("TEX-001", 2),)),
    PedidoDemo("P-20260905-0019", "C-0005", 24, "entregado", 20, (("ILU-004", 1),)),
    PedidoDemo("P-20260910-0021", "C-0002", 40, "entregado", 36, (("ELE-002", 1),)),
    PedidoDemo("P-20260911-0022", "C-0006", 12, "entregado", 8, (("MEN-002", 1), ("TEX-005", 2))),
    PedidoDemo("P-20260912-0023", "C-0006", 3, "pendiente", None, (("CAF-005", 1),)),
    PedidoDemo("P-20260913-0024", "C-0007", 15, "entregado", 11, (("TEX-003", 1),)),
    PedidoDemo("P-20260914-0025", "C-0007", 1, "pendiente", None, (("ILU-002", 1),)),
    PedidoDemo("P-20260915-0026", "C-0008", 20, "entregado", 16, (("ELE-004", 1), ("ILU-004", 2))),
    PedidoDemo("P-20260916-0027", "C-0008", 4, "enviado", None, (("MEN-004", 1),)),
    PedidoDemo("P-20260917-0028", "C-0009", 10, "entregado", 6, (("CAF-002", 1),)),
    PedidoDemo("P-20260918-0029", "C-0009", 60, "entregado", 55, (("TEX-004", 1),)),
    PedidoDemo("P-20260919-0030", "C-0010", 14, "entregado", 9, (("ILU-003", 1),)),
    PedidoDemo("P-20260920-0031", "C-0010", 5, "cancelado", None, (("ELE-003", 1),)),
    PedidoDemo("P-20260921-0032", "C-0011", 11, "entregado", 7, (("MEN-005", 1),)),
    PedidoDemo("P-20260922-0033", "C-0011", 2, "enviado", None, (("TEX-001", 4),)),
    PedidoDemo("P-20260923-0034", "C-0012", 18, "entregado", 13, (("CAF-003", 1),)),
    PedidoDemo("P-20260924-0035", "C-0012", 6, "entregado", 1, (("ELE-002", 1), ("MEN-002", 1))),
    PedidoDemo("P-20260925-0036", "C-0001", 35, "entregado", 31, (("TEX-005", 3),)),
    PedidoDemo("P-20260926-0037", "C-0003", 9, "entregado", 5, (("ILU-002", 1),)),
    PedidoDemo("P-20260927-0038", "C-0004", 25, "entregado", 21, (("MEN-003", 2),)),
    PedidoDemo("P-20260928-0039", "C-0002", 3, "pendiente", None, (("TEX-002", 1),)),
    PedidoDemo("P-20260929-0040", "C-0006", 45, "entregado", 40, (("ELE-001", 1),)),
    PedidoDemo("P-20260930-0042", "C-0007", 7, "entregado", 2, (("CAF-002", 2),)),
    PedidoDemo("P-20261001-0043", "C-0008", 16, "entregado", 12, (("TEX-003", 1), ("TEX-005", 1))),
    PedidoDemo("P-20261002-0044", "C-0009", 1, "pendiente", None, (("ILU-001", 1),)),
    PedidoDemo("P-20261003-0045", "C-0010", 30, "entregado", 26, (("MEN-001", 2),)),
    PedidoDemo("P-20261004-0046", "C-0011", 22, "entregado", 18, (("ELE-004", 1),)),
]

# Cancelar un pedido sin enviar (issue 27): 25 EUR sale solo; 420 EUR pide firma y, por la
# matriz por defecto (encargado hasta 300 EUR), un gerente. P-20260925-0150 (enviado) no se
# cancela: el cliente lee qué puede hacer.
PEDIDOS_CANCELACION = [
    PedidoDemo("P-20261008-0201", "C-0002", 1, "pendiente", None, (("ELE-002", 1),)),
    PedidoDemo("P-20261009-0420", "C-0011", 1, "pendiente", None, (("CAF-001", 3), ("ILU-002", 2))),
]

# Vale de compensación (issue 27): entregado hace 2 días, una línea de 99,00 EUR. «Llegó con
# un arañazo, no quiero devolverlo» -> un vale de 9,90 EUR sin firma; 30 EUR -> un encargado.
PEDIDOS_VALE = [
    PedidoDemo("P-20261012-0099", "C-0003", 4, "entregado", 2, (("VAJ-001", 1),)),
]

# -- Reenvíos (issue 27, sql/017): pedidos enviados y cuándo salieron ----------------------
PEDIDOS_REENVIO = [
    # Lámpara de 40 EUR enviada hace 6 días (más de los 3 de reparto): «no me ha llegado» ->
    # se reenvía sola (Madrid-Centro tiene stock).
    PedidoDemo("P-20261010-0300", "C-0012", 7, "enviado", None, (("ILU-001", 1),)),
    # Cuchillos enviados ayer: aún no llegan tarde; no se reenvía nada.
    PedidoDemo("P-20261011-0310", "C-0008", 2, "enviado", None, (("MEN-005", 1),)),
    # Cafetera de 120 EUR enviada hace 8 días: el reenvío pasa del límite (50 EUR): encargado.
    PedidoDemo("P-20261009-0120", "C-0010", 9, "enviado", None, (("CAF-001", 1),)),
]
# Días desde el envío de los pedidos enviados que lo necesitan fijo; el resto de pedidos
# enviados o entregados salió el día después de la compra (nunca después de la entrega).
DIAS_DESDE_ENVIO = {"P-20261010-0300": 6, "P-20261011-0310": 1, "P-20261009-0120": 8}

PEDIDOS = PEDIDOS_CLAVE + PEDIDOS_RELLENO + PEDIDOS_CANCELACION + PEDIDOS_VALE + PEDIDOS_REENVIO

# Devoluciones históricas (ya resueltas fuera del agente): C-0005 tiene dos recientes.
DEVOLUCIONES = [
    ("P-20260901-0011", "C-0005", D("15.00"), "La toalla destiñe", 10),
    ("P-20260905-0019", "C-0005", D("9.90"), "Bombillas fundidas", 20),
    ("P-20260910-0021", "C-0002", D("25.00"), "No la usaba", 34),
]
