"""Todas las claves de los candados consultivos (advisory locks) del producto, en un sitio.

Un candado consultivo de PostgreSQL se identifica por su clave: o un ``bigint``, o dos
``int4`` (un espacio y, dentro, p. ej. ``hashtext(thread_id)``). PostgreSQL no confunde
una clave de un entero con una de dos, pero dos trabajos con la misma clave sí se
bloquean entre sí: por eso se eligen aquí, juntas, y ningún otro módulo escribe una.

- De sesión, con ``pg_try_advisory_lock`` (se sueltan a mano o al cerrar la conexión):
  ``CANDADO_MIGRACIONES``, ``CANDADO_RETENCION``, el espacio de las tareas periódicas
  ``ESPACIO_TAREAS`` (una por tarea, ``agente.servicio.periodicas``) y el espacio de los
  hilos ``ESPACIO_HILOS`` (el candado de cada conversación, ``agente.servicio.conversaciones.candados``).
- De transacción, con ``pg_advisory_xact_lock`` sobre ``hashtext`` de un texto con prefijo
  (se sueltan al terminar la transacción): las versiones de la matriz de autoridad de un
  ámbito, los cambios de la política de una tienda, los efectos de un mismo cliente y cada
  ritmo (429): lo que cuenta y lo que gasta una petición, bajo el mismo candado.
"""

from __future__ import annotations

__all__ = [
    "CANDADO_CLIENTE",
    "CANDADO_CLIENTE_SQL",
    "CANDADO_MATRIZ_SQL",
    "CANDADO_MIGRACIONES",
    "CANDADO_POLITICA_SQL",
    "CANDADO_RETENCION",
    "CANDADO_RITMO_SQL",
    "ESPACIO_TAREAS",
    "ESPACIO_HILOS",
]

# Claves de un entero (``bigint``), propias de este producto (7_310_xxx).
CANDADO_MIGRACIONES = 7_310_001  # migraciones y PostgresSaver.setup(): un proceso a la vez
# Cada tarea periódica con su candado (espacio, hashtext(nombre)): un servidor a la vez por tarea.
ESPACIO_TAREAS = 7_310
CANDADO_RETENCION = 7_310_010  # la limpieza de checkpoints: un servidor a la vez

# Primer entero de la clave de dos del candado de cada hilo (el segundo, hashtext(thread_id)).
ESPACIO_HILOS = 7_310_002

# Serializa las versiones nuevas de la matriz de un mismo ámbito (una tienda o «*», la por defecto).
CANDADO_MATRIZ_SQL = "SELECT pg_advisory_xact_lock(hashtext('matriz_autoridad:' || %(ambito)s))"
# Serializa los cambios de una tienda: proponer, firmar y aplicar ven la política vigente.
CANDADO_POLITICA_SQL = "SELECT pg_advisory_xact_lock(hashtext('politica_tienda:' || %(tienda)s))"

# Serializa los efectos de un mismo cliente (todas sus conversaciones): el efecto vuelve a
# decidir su regla bajo este candado, en su transacción, antes de escribir (issue 38).
# Orden fijo para no interbloquear: primero el pedido (FOR UPDATE), después el cliente.
# ``CANDADO_CLIENTE`` es la expresión, para tomarlo en la misma sentencia que otra lectura
# que no dependa de lo que se espera (la foto de esa sentencia es la de antes de la espera).
CANDADO_CLIENTE = "pg_advisory_xact_lock(hashtext('cliente:' || %(cliente_id)s))"
CANDADO_CLIENTE_SQL = f"SELECT {CANDADO_CLIENTE}"

# Serializa cada ritmo (429) sobre su clave: la dirección o la IP de un enlace de entrada, o
# los mensajes de un cliente. Contar y anotar la petición van en la transacción que lo toma
# y la cuenta se lee en la sentencia siguiente (tras esperar, con la foto nueva): dos
# peticiones a la vez nunca pasan las dos con la cuenta en el límite (issue 39). Con varias
# claves, en orden, para no interbloquear.
CANDADO_RITMO_SQL = "SELECT pg_advisory_xact_lock(hashtext('ritmo:' || %(clave)s))"
