"""Pagos: los reembolsos y cobros pendientes que el sistema termina solo (``pendientes``)
y la pasarela con una línea de log por movimiento (``pasarela_registrada``).
"""
