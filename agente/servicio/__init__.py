"""La capa de servicio: la única puerta al agente para la CLI y la API HTTP.

Responsabilidades que el checkpointer no cubre (ver ``docs/trampas.md``), cada una en
su subpaquete (``docs/arquitectura.md``, «Servicio y web»). De abajo arriba (el contrato
``servicio`` de import-linter lo comprueba):

- ``resultados``, ``textos``, ``personas``: los tipos que devuelve el servicio, lo que la
  aplicación escribe al cliente y quién es quién (cliente, encargado activo);
- ``aprobaciones/``: una aprobación pendiente: su fila en la cola, la autoridad que exige
  y las firmas que la cumplen, y los avisos a quien debe firmar;
- ``conversaciones/``: el turno del cliente (un mensaje nunca llega a un hilo en pausa),
  cómo se ejecuta el agente sobre un hilo (candado, límite, contexto) y qué se guarda al
  terminar (``desenlace``: una pausa se encola, una respuesta cierra el turno), los
  mensajes retenidos, el ``LISTEN`` de avisos, el ritmo (429) y lo que ve el portal;
- ``decisiones/``: lo que cierra una pausa: la decisión del encargado (validada y
  registrada antes de reanudar), «lo atiendo yo», la ficha, la caducidad, el conciliador
  (lo roto se repara) y el historial de lo decidido;
- ``politica/``: administrar umbrales y matriz de autoridad de una tienda (con separación
  de funciones) y la comprobación al arrancar de las operaciones declaradas;
- ``pagos/``: los reembolsos y cobros pendientes se completan solos; la pasarela con log;
- ``auditoria/``: qué salió sin firma, si las firmas y la política cuadran, si el libro
  cuadra con la pasarela, si lo que el agente dijo al cliente pasó (``afirmaciones``,
  ``verdad``: también la evaluación y las pruebas lo comprueban) y los movimientos (todo el
  dinero y la mercancía que se movió);
- ``entrada/``: la entrada del personal sin la CLI: casar un correo verificado con un
  encargado activo y los enlaces de entrada por correo (solo su hash, de un uso, con ritmo);
- ``alta/``: el alta sin SQL: tiendas, regiones y personas, con la separación de funciones
  y cada cambio anotado; el primer administrador (``alta_primera``, una vez);
- ``tienda/``: la ingesta del back office de la tienda (registros idempotentes por su id,
  lotes en JSON lines, claves de API con alcances);
- ``operador/``: lo que pide quien opera (salud y métricas, qué guarda un hilo, ids por
  prefijo, token y demo antes de que exista un servicio);
- ``protocolo/``: lo que el protocolo de LangGraph (``/langgraph``) lee de la base: los hilos
  con su transcripción y su pausa, y sus ejecuciones (*runs*);
- ``fachada``: ``Servicio``, que compone todo eso; ``fabrica``: lo construye desde los
  ajustes; ``periodicas``: sus pasadas periódicas.

La web y la CLI solo importan de aquí (contrato ``servicio-por-la-puerta``): de
``Servicio`` y de lo que se re-exporta abajo. La CLI de política trabaja con una conexión
corta, sin construir el agente: por eso ``politica_tienda``, ``cambios_politica`` y
``gestion_autoridad`` se re-exportan como módulos.
"""

from agente.demo.buzon import leer_buzon as correos_demo
from agente.demo.piezas import PASARELAS_DEMO, piezas_demo
from agente.servicio.alta import primera as alta_primera
from agente.servicio.aprobaciones.firmas import FirmaParcial, requisito_publico
from agente.servicio.auditoria.informe import hallazgos as hallazgos_auditoria
from agente.servicio.auditoria.movimientos import ESTADOS as ESTADOS_MOVIMIENTO
from agente.servicio.auditoria.movimientos import TIPOS as TIPOS_MOVIMIENTO
from agente.servicio.auditoria.movimientos import Filtros as FiltrosMovimientos
from agente.servicio.auditoria.movimientos_csv import como_csv as movimientos_como_csv
from agente.servicio.auditoria.movimientos_csv import como_csv_hoja as movimientos_como_csv_hoja
from agente.servicio.auditoria.verdad import afirmaciones_falsas
from agente.servicio.conversaciones.atencion import ESTADOS_CLIENTE as ESTADOS_CONVERSACION
from agente.servicio.conversaciones.atencion import MAX_TEXTO as MAX_TEXTO_TIENDA
from agente.servicio.conversaciones.atencion import Busqueda as BusquedaConversaciones
from agente.servicio.decisiones.decididas import FORMATOS_CSV as FORMATOS_CSV_DECISIONES
from agente.servicio.decisiones.decididas import TIPOS as TIPOS_DECISION
from agente.servicio.decisiones.decididas import Filtros as FiltrosDecisiones
from agente.servicio.decisiones.decididas import como_csv as decisiones_como_csv
from agente.servicio.decisiones.decididas import como_csv_hoja as decisiones_como_csv_hoja
from agente.servicio.decisiones.decididas import (
    lo_que_decidio,
    nombre_decision,
    nombre_operacion,
    tipo_de_nombre,
)
from agente.servicio.decisiones.decidir import SISTEMA
from agente.servicio.decisiones.validacion import decisiones_permitidas
from agente.servicio.entrada import EnlaceEntrada
from agente.servicio.fabrica import CONEXIONES_PROPIAS, crear_servicio
from agente.servicio.fachada import Servicio
from agente.servicio.operador.arranque import cargar_demo_una_vez, tienda_para_token
from agente.servicio.pagos.pendientes import InformePagos
from agente.servicio.periodicas import arrancar as arrancar_periodicas
from agente.servicio.politica import cambios_politica, gestion_autoridad, politica_tienda
from agente.servicio.protocolo import FiltroHilos
from agente.servicio.resultados import (
    Arreglo,
    Ejecucion,
    Encargado,
    EstadoHilo,
    InformeAuditoria,
    RegistroDecision,
    Respuesta,
)
from agente.servicio.tienda import ingesta as ingesta_tienda
from agente.servicio.tienda.aplicar import Aplicado
from agente.servicio.tienda.claves import ClaveApi
from agente.servicio.tienda.lotes import InformeLote
from agente.servicio.tienda.registros import (
    CambioEstado,
    DatosCliente,
    DatosPedido,
    DatosProducto,
    DatosStock,
)

__all__ = [
    "alta_primera",
    "BusquedaConversaciones",
    "ESTADOS_CONVERSACION",
    "MAX_TEXTO_TIENDA",
    "Aplicado",
    "CambioEstado",
    "ClaveApi",
    "DatosCliente",
    "DatosPedido",
    "DatosProducto",
    "DatosStock",
    "InformeLote",
    "ingesta_tienda",
    "EnlaceEntrada",
    "CONEXIONES_PROPIAS",
    "FORMATOS_CSV_DECISIONES",
    "ESTADOS_MOVIMIENTO",
    "TIPOS_MOVIMIENTO",
    "FiltrosMovimientos",
    "movimientos_como_csv",
    "movimientos_como_csv_hoja",
    "SISTEMA",
    "TIPOS_DECISION",
    "Arreglo",
    "Ejecucion",
    "Encargado",
    "EstadoHilo",
    "FiltroHilos",
    "FiltrosDecisiones",
    "FirmaParcial",
    "InformeAuditoria",
    "InformePagos",
    "RegistroDecision",
    "Respuesta",
    "Servicio",
    "afirmaciones_falsas",
    "arrancar_periodicas",
    "cambios_politica",
    "gestion_autoridad",
    "cargar_demo_una_vez",
    "correos_demo",
    "piezas_demo",
    "PASARELAS_DEMO",
    "crear_servicio",
    "decisiones_como_csv",
    "decisiones_como_csv_hoja",
    "decisiones_permitidas",
    "hallazgos_auditoria",
    "lo_que_decidio",
    "nombre_decision",
    "nombre_operacion",
    "politica_tienda",
    "requisito_publico",
    "tienda_para_token",
    "tipo_de_nombre",
]
