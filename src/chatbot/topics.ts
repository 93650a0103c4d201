/** What the web chatbot's conversations are about and where they start (the chatbot area's filters). */
export const CHATBOT_TOPICS = ['product_question', 'shipping', 'returns', 'order_status', 'payment', 'discounts', 'stock_availability'] as const;
export type ChatbotTopic = (typeof CHATBOT_TOPICS)[number];
export const START_PAGE_TYPES = ['home', 'product', 'category', 'cart', 'checkout', 'help', 'other'] as const;
