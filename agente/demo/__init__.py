"""La demo: dos tiendas, 25 productos, 12 clientes, 30+ pedidos, y las personas que firman
(encargados, un gerente y una regional) con sus contactos de aviso.

- ``catalogo``: tiendas, personas que firman, productos, stock, clientes y sus direcciones;
- ``pedidos``: los pedidos de la demo (cada uno para un caso: reembolso, cancelación, vale,
  reenvío...) y las devoluciones históricas;
- ``carga``: ``cargar_demo``, que lo escribe en la base (pruebas, banco, evaluación);
- ``una_vez``: lo que usan ``agente demo`` y ``agente db demo``: cargarla solo en una base
  vacía, conservarla si ya está y reiniciarla solo cuando se pide.

Los identificadores son fijos (README, docs y tests los nombran); las fechas son
relativas al día en que se carga.
"""
