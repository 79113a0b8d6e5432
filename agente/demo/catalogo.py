"""El catálogo de la demo: tiendas, personas que firman (con su rol y su correo), productos,
stock, clientes y la dirección de cada cliente. Los identificadores son fijos (README, docs y
tests los nombran)."""

from __future__ import annotations

from decimal import Decimal

D = Decimal

TIENDAS = [("talavera", "Talavera de la Reina"), ("madrid-centro", "Madrid-Centro")]

ENCARGADOS = [
    ("enc-talavera", "talavera", "Lucía Moreno", True),
    ("enc-madrid-centro", "madrid-centro", "Javier Ortega", True),
    ("enc-talavera-baja", "talavera", "Pedro Sanz (de baja)", False),
    ("enc-talavera-2", "talavera", "Sergio Alonso", True),
    ("ger-talavera", "talavera", "Marta Jiménez", True),
    ("reg-centro", "madrid-centro", "Beatriz Romero", True),
]

# Rol de quien firma (sql/008; si no está aquí, «encargado») y tiendas de cada regional.
ROLES = {"ger-talavera": "gerente", "reg-centro": "regional"}
TIENDAS_REGIONALES = [("reg-centro", "talavera"), ("reg-centro", "madrid-centro")]

# El correo de cada persona: entra con él (OIDC o enlace, sql/021) y es su contacto de aviso
# (también la de baja: no se le avisa por estar inactiva, no por faltarle contacto).
EMAILS = {i: f"{i}@tienda.example" for i, *_ in ENCARGADOS}
CONTACTOS = [(i, "email", EMAILS[i]) for i, *_ in ENCARGADOS]

# sku, nombre, categoria, pvp (el mismo en las dos tiendas, precios_tienda: sql/030)
PRODUCTOS = [
    ("CAF-001", "Cafetera de goteo Aroma 10 tazas", "cafeteras", D("120.00")),
    ("CAF-002", "Cafetera italiana Moka 6 tazas", "cafeteras", D("29.90")),
    ("CAF-003", "Cafetera espresso Crema 15 bar", "cafeteras", D("120.00")),
    ("CAF-004", "Cafetera superautomática Barista", "cafeteras", D("249.00")),
    ("CAF-005", "Cafetera de cápsulas Mini", "cafeteras", D("69.00")),
    ("MEN-001", "Sartén antiadherente 24 cm", "menaje", D("24.90")),
    ("MEN-002", "Sartén antiadherente 20 cm", "menaje", D("19.90")),
    ("MEN-003", "Sartén inducción Pro 24 cm", "menaje", D("24.90")),
    ("MEN-004", "Sartén honda 28 cm", "menaje", D("34.90")),
    ("MEN-005", "Juego de 3 cuchillos", "menaje", D("45.00")),
    ("TEX-001", "Toalla de baño algodón", "textil", D("15.00")),
    ("TEX-002", "Juego de sábanas 90 cm", "textil", D("35.00")),
    ("TEX-003", "Juego de sábanas 135 cm", "textil", D("45.00")),
    ("TEX-004", "Nórdico 150 cm", "textil", D("59.00")),
    ("TEX-005", "Cojín decorativo", "textil", D("12.00")),
    ("ILU-001", "Lámpara de mesa Nube", "iluminacion", D("40.00")),
    ("ILU-002", "Flexo LED articulado", "iluminacion", D("30.00")),
    ("ILU-003", "Lámpara de pie Arco", "iluminacion", D("40.00")),
    ("ILU-004", "Pack 4 bombillas LED", "iluminacion", D("9.90")),
    ("ELE-001", "Batidora de vaso 600 W", "electrodomesticos", D("30.00")),
    ("ELE-002", "Tostadora 2 ranuras", "electrodomesticos", D("25.00")),
    ("ELE-003", "Exprimidor eléctrico", "electrodomesticos", D("30.00")),
    ("ELE-004", "Hervidor de agua 1,7 l", "electrodomesticos", D("35.00")),
    ("REP-001", "Jarra de repuesto para cafetera Aroma", "repuestos", D("14.90")),
    # Vale de compensación (issue 27): una línea de 99,00 EUR, sola en su categoría.
    ("VAJ-001", "Vajilla de porcelana 18 piezas", "vajilla", D("99.00")),
]

# Stock por tienda; REP-001 está agotado en las dos (sin alternativa posible).
STOCK_POR_DEFECTO = 8
STOCK_ESPECIAL = {
    ("talavera", "REP-001"): 0,
    ("madrid-centro", "REP-001"): 0,
    ("talavera", "CAF-004"): 2,
    ("madrid-centro", "TEX-004"): 0,
}

# id, tienda, nombre, email, telefono
CLIENTES = [
    ("C-0001", "talavera", "Ana García López", "ana.garcia@example.com", "+34 600 111 001"),
    ("C-0002", "talavera", "Bruno Díaz Martín", "bruno.diaz@example.com", "+34 600 111 002"),
    ("C-0003", "madrid-centro", "Carmen Ruiz Gómez", "carmen.ruiz@example.com", "+34 600 111 003"),
    ("C-0004", "madrid-centro", "David Fernández Gil", "david.fernandez@example.com", "+34 600 111 004"),
    ("C-0005", "talavera", "Elena Navarro Ramos", "elena.navarro@example.com", "+34 600 111 005"),
    ("C-0006", "talavera", "Fernando Torres Vidal", "fernando.torres@example.com", "+34 600 111 006"),
    ("C-0007", "madrid-centro", "Gloria Herrera Castro", "gloria.herrera@example.com", "+34 600 111 007"),
    ("C-0008", "madrid-centro", "Hugo Molina Ortiz", "hugo.molina@example.com", "+34 600 111 008"),
    ("C-0009", "talavera", "Irene Delgado Serrano", "irene.delgado@example.com", "+34 600 111 009"),
    ("C-0010", "madrid-centro", "Jorge Castillo Rubio", "jorge.castillo@example.com", "+34 600 111 010"),
    ("C-0011", "talavera", "Laura Ibáñez Pascual", "laura.ibanez@example.com", "+34 600 111 011"),
    ("C-0012", "madrid-centro", "Marcos Vega Prieto", "marcos.vega@example.com", "+34 600 111 012"),
]

# -- direcciones de envío (issue 27, cambio de dirección) ---------------------------------------
# Cada cliente vive cerca de su tienda (Talavera: 45600, provincia de Toledo; Madrid-Centro:
# 280xx, Madrid); sus pedidos se envían a su dirección. La provincia sale del código postal.
DIRECCIONES_CLIENTES = {
    "C-0001": ("Calle del Prado 12, 3º A", "45600", "Talavera de la Reina"),
    "C-0002": ("Avenida de Portugal 41", "45600", "Talavera de la Reina"),
    "C-0003": ("Calle de Atocha 23, 1º", "28012", "Madrid"),
    "C-0004": ("Calle de Toledo 68, 4º D", "28005", "Madrid"),
    "C-0005": ("Calle San Francisco 7", "45600", "Talavera de la Reina"),
    "C-0006": ("Plaza del Pan 3", "45600", "Talavera de la Reina"),
    "C-0007": ("Calle de Fuencarral 101, 2º B", "28004", "Madrid"),
    "C-0008": ("Calle del Arenal 9", "28013", "Madrid"),
    "C-0009": ("Calle Carnicerías 15", "45600", "Talavera de la Reina"),
    "C-0010": ("Calle de Hortaleza 55, bajo", "28004", "Madrid"),
    "C-0011": ("Avenida de Extremadura 20", "45600", "Talavera de la Reina"),
    "C-0012": ("Calle de Alcalá 120, 5º", "28009", "Madrid"),
}
