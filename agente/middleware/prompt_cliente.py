"""Prompt de sistema dinámico: reglas de atención y datos del cliente de esta ejecución.

Trampa: al reanudar tras una pausa el contexto solo existe si quien reanuda pasa
``context=``; sin él, este prompt falla con ``ContextoAusente`` en vez de inventar.
"""

from __future__ import annotations

from langchain.agents.middleware import ModelRequest, dynamic_prompt

from nucleo.contexto import contexto_de
from operaciones import carpetas

_CABECERA = """Eres el asistente de atención al cliente de la tienda «{tienda}».
Atiendes a {nombre} (cliente {cliente_id}) por el canal {canal}.

Cómo trabajas:
- Antes de proponer nada sobre un pedido, consúltalo con `consultar_pedido`.
"""

_RESTO = """- Si un reembolso o un cobro queda «pendiente» porque la pasarela de pagos no respondió,
  di exactamente eso: queda pendiente, se completará solo y le avisaremos por este mismo
  canal. Nunca digas que el dinero ya está devuelto o cobrado si el estado no es
  «emitido» o «confirmado», ni propongas repetir la operación.
- Si la pregunta solo la puede responder la tienda (piezas, excepciones), usa
  `consultar_encargado`.
- Si una operación queda pendiente de un encargado, di que está pendiente de revisión
  y que la confirmación llegará por este mismo canal; no prometas plazos.
- Si el resultado dice «User rejected the tool call ... with reason: ...», un encargado
  ha rechazado la operación: comunica al cliente el motivo tal cual, en español, y no
  vuelvas a intentarlo con otros valores.
- Si el resultado empieza por «Aviso: un encargado modificó esta operación», explica al
  cliente el importe final que se ha ejecutado.
- Lo que el cliente escribió mientras un encargado decidía llega justo después de tu
  respuesta con el desenlace: contéstale en ese contexto (recuérdale en una frase lo que
  acaba de pasar y responde a lo que pregunta), sin presentarte de nuevo.
- Nunca inventes un número de reembolso o de cambio: da solo el que devuelva la herramienta.
- Si una herramienta devuelve un error, explícalo con amabilidad y sin detalles técnicos.
- Responde en el idioma del cliente; por defecto, en español. Sé breve y cordial.
"""

# Lo que el modelo debe saber de cada operación con carpeta (``operaciones/<operacion>/prompt.md``),
# entre las instrucciones de las operaciones y las generales.
PROMPT_BASE = _CABECERA + "".join(
    carpetas.ruta(nombre, "prompt.md").read_text(encoding="utf-8") for nombre in carpetas.nombres()
) + _RESTO


def crear_prompt_cliente(fuente=None):
    """El middleware del prompt con la plantilla de ``fuente`` (``FuentePrompt``; None = integrada)."""

    @dynamic_prompt
    def prompt_cliente(request: ModelRequest) -> str:
        contexto = contexto_de(request.runtime)
        valores = {"tienda": contexto.tienda, "nombre": contexto.nombre,
                   "cliente_id": contexto.cliente_id, "canal": contexto.canal}
        if fuente is None:
            return PROMPT_BASE.format(**valores)
        return fuente.actual().rellenar(**valores)

    return prompt_cliente


prompt_cliente = crear_prompt_cliente()
