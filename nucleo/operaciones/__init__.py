"""Las operaciones con efecto de la tienda, declaradas una vez, y ``lista.OPERACIONES``.

Todas viven en ``operaciones/<operacion>/declaracion.py``; ``lista.OPERACIONES`` las
descubre recorriendo las carpetas (``operaciones/carpetas.py``).

``OPERACIONES`` es la única lista de clases de efecto; el registro de herramientas es la
única lista de herramientas. Quien necesite saber algo de una operación (su regla, sus
filas de la matriz, su tabla, sus etiquetas, su texto para el cliente...) lo lee de aquí
y recorre ``OPERACIONES`` en vez de nombrar «reembolso» o «sustitución».

Añadir una operación: su carpeta en ``operaciones/`` con sus piezas
(``operaciones.carpetas.PIEZAS``) y una migración con su tabla y sus valores. La vista
``efectos``, la CHECK de ``compensaciones_unidad`` y las filas de la matriz por defecto
(``EnMatriz``) se generan de las declaraciones al migrar (``agente.bd.derivados``). Lo que
falte lo nombran el arranque del servicio
(``agente.servicio.politica.comprobar_operaciones``) y
``tests/integracion/test_operaciones_declaradas.py``. ``CAMBIO``, ``REEMBOLSO`` y los
``VALE_*`` de aquí son un reenvío de compatibilidad: los leen las pruebas y, de ``VALE_*``,
la CLI y la auditoría de series (la ventana de un vale por cliente).
"""

from nucleo.operaciones.lista import (
    COLUMNAS_EFECTOS,
    OPERACIONES,
    comprobacion_compensaciones_sql,
    por_herramienta,
    por_regla,
    vista_efectos_sql,
)
from operaciones.reembolso.declaracion import REEMBOLSO
from operaciones.sustitucion.declaracion import CAMBIO
from operaciones.vale.declaracion import (
    VALE,
    VALE_DIAS_CADUCIDAD_DEFECTO,
    VALE_IMPORTE_MAX_DEFECTO,
    VALE_PORCENTAJE_MAX_DEFECTO,
    VALE_VENTANA_DIAS,
)

__all__ = [
    "CAMBIO",
    "COLUMNAS_EFECTOS",
    "OPERACIONES",
    "REEMBOLSO",
    "VALE",
    "VALE_DIAS_CADUCIDAD_DEFECTO",
    "VALE_IMPORTE_MAX_DEFECTO",
    "VALE_PORCENTAJE_MAX_DEFECTO",
    "VALE_VENTANA_DIAS",
    "comprobacion_compensaciones_sql",
    "por_herramienta",
    "por_regla",
    "vista_efectos_sql",
]
