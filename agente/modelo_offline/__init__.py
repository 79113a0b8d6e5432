"""Modelo de chat offline basado en reglas. NO es un LLM.

Existe para que la demo y las pruebas de extremo a extremo funcionen sin clave de API
ni red. Llama a las MISMAS herramientas que usaría un LLM (llamadas reales, con
``tool_calls`` e ids únicos) y redacta la respuesta en español a partir del JSON que
devuelven. No inventa números: el número de reembolso o de sustitución, los importes y
las fechas salen siempre del resultado de una herramienta.

Entiende las peticiones de la demo: estado de un pedido; devolución o reembolso, total
o de una línea, con su motivo («... porque gotea»); cambio de un producto por otro en
stock («por una más barata», «del mismo precio», «más cara», «por la CAF-004»);
preguntas para el encargado; y un reembolso y un cambio en el mismo mensaje (primero
las consultas, después las dos operaciones en UN solo mensaje: una sola revisión). Lo
que el cliente niega o retira en el mismo mensaje no se hace, y «¿qué podéis hacer?» por
un pedido que no llega se contesta con las opciones antes de hacer nada.

Por módulos, en el orden en que trabaja:

- ``texto``: normalizar el texto y reconocer pedidos, SKU y productos (la base de todos).
- ``matices``: lo que cambia lo pedido en cualquier operación: negarla («sin devolverlo»,
  «en vez de cambiarla»), retractarse («bueno no, mejor me lo quedo»), cuántas unidades
  («una sartén») y el artículo nombrado que el pedido no tiene («la jarra»: se pregunta).
- Un módulo por operación sin carpeta (``reembolso``, ``cancelacion``): sus ``FRASES``
  (otras maneras de pedirla o de renunciar a ella) y sus textos. Las operaciones con carpeta
  los tienen en ella (``operaciones/<operacion>/maneras.py``, ``frases.py`` y ``paso.py``).
- ``articulo``: el artículo nombrado que el pedido no tiene (para los pasos de cualquier operación).
- ``lectura``: el mensaje del cliente -> tareas (intención, pedido, SKU, motivo).
- ``resultados``: lo que volvió a cada llamada (status, artifact, JSON; el único
  analizador del texto en inglés de un rechazo).
- ``pasos`` y ``plan``: el siguiente paso de cada tarea y el plan del turno.
- ``redaccion``: los textos en español; ``seguimiento``: lo que no entiende justo después
  de un desenlace (un mensaje escrito mientras decidía el encargado) se contesta recordándolo.
- ``modelo``: el ``BaseChatModel`` (``bind_tools``, streaming).

Es determinista para un mismo historial (salvo los ids aleatorios de las llamadas).
"""

from agente.modelo_offline.modelo import ModeloOffline, decidir

__all__ = ["ModeloOffline", "decidir"]
